"""Whether an outside service (arXiv) answers: when it stopped, when the next try is due.

Written by the crawl and download tasks after every attempt (papers.services.reachability); read
by the dashboard's banner and by the periodic resume task, which tries again once `next_try_at`
has passed, so work resumes by itself when the network returns.
"""
from __future__ import annotations

from django.db import models


class SourceHealth(models.Model):
    name = models.CharField(max_length=40, unique=True, help_text="e.g. arxiv")
    reachable = models.BooleanField(null=True, help_text="None until the first attempt")
    unreachable_since = models.DateTimeField(null=True, blank=True)
    last_ok_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_try_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        state = {True: "reachable", False: "unreachable", None: "not tried"}[self.reachable]
        return f"{self.name}: {state}"

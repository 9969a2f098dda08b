"""What the advisor keeps in the database: model specs read from the Hugging Face Hub, and each
signed-in person's saved setup.

HubModel is written by `advisor.hub` the first time a model outside the catalog is asked for, and
again only when the Hub reports a new revision of the repo; read on every later request for that model.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class HubModel(models.Model):
    """One Hub repo's config.json and safetensors parameter counts at the revision they were read."""

    repo_id = models.CharField(max_length=200, unique=True)
    revision = models.CharField(max_length=64)
    source_url = models.URLField(max_length=500)
    config = models.JSONField()
    parameters = models.JSONField(default=dict)
    fetched_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.repo_id}@{self.revision[:12]}"


class SavedSetup(models.Model):
    """The hardware, engine, model and workload a signed-in person compares papers against
    (advisor.applicability); kept with the account, so it follows them to any browser."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_setup")
    setup = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"setup of {self.user}"

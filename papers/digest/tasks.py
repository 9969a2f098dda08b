"""Celery task "papers.tasks.send_digests_task": the weekly digest run (Celery beat, queue "digest").

Registered under the papers.tasks name (papers/tasks.py imports this module). Safe to run on
several workers at once: each subscriber is claimed by exactly one. When some sends failed, the
task retries itself after DIGEST_RETRY_DELAY_S, when those subscribers are due again.
"""
from __future__ import annotations

from celery import shared_task
from django.conf import settings

from papers.digest.services import send_due_digests


@shared_task(bind=True, name="papers.tasks.send_digests_task", max_retries=5)
def send_digests_task(self) -> dict:
    report = send_due_digests()
    if report.failed:
        raise self.retry(countdown=settings.DIGEST_RETRY_DELAY_S + 1)
    return {"sent": len(report.sent), "empty": len(report.empty), "skipped": len(report.skipped)}

"""The Celery app: one queue per kind of work, so each can get its own workers and machines.

Tasks are routed by name: papers crawl, parse, extract and digest tasks each to their queue. Workers ack
late and reject on worker loss, so a killed worker's task is redelivered; every task is idempotent.
"""
from __future__ import annotations

import os
import random

from celery import Celery, Task
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")

QUEUES = ("crawl", "parse", "extract", "digest")
DATABASE_OUTAGE_RETRIES = 12


class InfraWikiTask(Task):
    """Every task's base: a database outage (PostgreSQL restarting, failing over) is transient.

    The task is retried with a growing delay instead of failing, so work queued while the database
    was away completes once it is back; tasks are idempotent, so a retry never duplicates an effect.
    """

    def __call__(self, *args, **kwargs):
        from django.db import InterfaceError, OperationalError, close_old_connections

        try:
            return super().__call__(*args, **kwargs)
        except (OperationalError, InterfaceError) as exc:
            close_old_connections()
            attempt = self.request.retries
            if attempt >= DATABASE_OUTAGE_RETRIES:
                raise
            delay = min(60.0, 2.0 * 1.5**attempt) * random.uniform(0.8, 1.2)
            raise self.retry(exc=exc, countdown=delay, max_retries=DATABASE_OUTAGE_RETRIES) from exc


app = Celery("infrawiki", task_cls=InfraWikiTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_queues=[Queue(name) for name in QUEUES],
    task_default_queue="parse",
    task_routes={
        "papers.tasks.crawl_*": {"queue": "crawl"},
        "papers.tasks.fetch_*": {"queue": "crawl"},
        "papers.tasks.download_*": {"queue": "crawl"},
        "papers.tasks.resume_*": {"queue": "crawl"},
        "papers.tasks.parse_*": {"queue": "parse"},
        "papers.tasks.score_*": {"queue": "parse"},
        "papers.tasks.extract_*": {"queue": "extract"},
        "papers.tasks.send_*": {"queue": "digest"},
    },
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_track_started=True,
    broker_connection_retry_on_startup=True,
    task_serializer="json",
    accept_content=["json"],
    timezone="UTC",
)
app.autodiscover_tasks()

"""The default broker needs no server: a real worker takes tasks queued in PostgreSQL itself."""
from __future__ import annotations

import os

import pytest
from celery import Celery
from kombu.transport.sqlalchemy import Channel as SqlAlchemyChannel

from infrawiki.runtime import database_url, sqlalchemy_broker_url
from papers.models import Paper
from papers.models.scoring import Score
from tests.conftest import ROOT, start_celery_worker, stop_celery_worker, wait_until

pytestmark = pytest.mark.slow


def test_a_worker_on_the_embedded_postgres_broker_runs_a_queued_task(transactional_db) -> None:
    from django.db import connection

    paper = Paper.objects.create(arxiv_id="2309.06180", title="Efficient Memory Management for LLM Serving",
                                 abstract="We evaluate on A100 GPUs with ShareGPT traces.")
    url = database_url(connection.settings_dict)
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_BROKER_TRANSPORT_OPTIONS")}
    env["DATABASE_URL"] = url
    worker = start_celery_worker(env, ROOT / ".infrawiki" / "test-logs" / f"embedded-{os.getpid()}.log", queues="parse")
    try:
        publisher = Celery("embedded-test", broker=sqlalchemy_broker_url(url), set_as_current=False)
        with publisher.connection_for_write() as connection:
            publisher.send_task("papers.tasks.score_paper_task", args=[paper.pk], queue="parse",
                                connection=connection)
        # kombu caches one SQLAlchemy engine per database; release its connection so the test
        # database can be dropped at teardown.
        for engine, _session in SqlAlchemyChannel._engines.values():
            engine.dispose()
        wait_until(Score.objects.filter(paper=paper).exists, 60, "the task queued in PostgreSQL to run")
    finally:
        stop_celery_worker(worker)
    assert Score.objects.filter(paper=paper).count() == 1

"""Faults under a real Celery worker: broker restart, database outage, worker killed mid-task.

Each test owns its PostgreSQL and Redis (see conftest), publishes real pipeline tasks by name and
reconciles counts in the database at the end: nothing lost, nothing duplicated.
"""
from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from celery import Celery

from tests.conftest import ROOT, start_celery_worker, stop_celery_worker, wait_until
from tests.reliability.conftest import manage

pytestmark = pytest.mark.slow
SCORE = "papers.tasks.score_paper_task"
TRANSPORT = {"visibility_timeout": 5, "unacked_restore_interval": 1, "unacked_restore_throttle": 1}


class Stack:
    """A private database + broker with the seed corpus loaded, and a publisher on that broker."""

    def __init__(self, postgres, redis, log_dir: Path) -> None:
        self.postgres, self.redis, self.log_dir = postgres, redis, log_dir
        self.env = {**os.environ, "DATABASE_URL": postgres.url, "CELERY_BROKER_URL": redis.url,
                    # redeliver a dead worker's task after 5 s, scanning every second (not 100 s)
                    "CELERY_BROKER_TRANSPORT_OPTIONS": json.dumps(TRANSPORT)}
        self.publisher = Celery("fault-test", broker=redis.url, set_as_current=False)
        self.publisher.conf.broker_transport_options = TRANSPORT
        self.publisher.conf.broker_connection_retry_on_startup = True

    def query(self, sql: str, *params) -> list[tuple]:
        with psycopg.connect(self.postgres.url, connect_timeout=5) as conn:
            return conn.execute(sql, params).fetchall()

    def paper_ids(self, limit: int) -> list[int]:
        return [row[0] for row in self.query("SELECT id FROM papers_paper ORDER BY id LIMIT %s", limit)]

    def publish(self, task: str, *args, queue: str) -> None:
        # A fresh connection each time: the broker may have restarted since the last one.
        with self.publisher.connection_for_write() as connection:
            self.publisher.send_task(task, args=list(args), queue=queue, connection=connection)

    def worker(self, name: str, queues: str = "crawl,parse,extract,digest"):
        return start_celery_worker(self.env, self.log_dir / f"{name}.log", queues=queues, concurrency=1)

    def scores_per_paper(self) -> dict[int, int]:
        return dict(self.query("SELECT paper_id, count(*) FROM papers_score GROUP BY paper_id"))


@pytest.fixture
def stack(private_postgres, private_redis, tmp_path) -> Iterator[Stack]:
    stack = Stack(private_postgres, private_redis, ROOT / ".infrawiki" / "test-logs" / tmp_path.name)
    manage("load_seed", env=stack.env)
    yield stack


def test_queued_work_completes_once_after_the_redis_broker_restarts(stack: Stack) -> None:
    papers = stack.paper_ids(6)
    assert len(papers) == 6, "the seed corpus should hold at least six papers"
    worker = stack.worker("broker-restart")
    try:
        for paper_id in papers[:3]:
            stack.publish(SCORE, paper_id, queue="parse")
        wait_until(lambda: len(stack.scores_per_paper()) == 3, 60, "the first three scores")

        stack.redis.stop()
        time.sleep(2)
        stack.redis.start()
        for paper_id in papers[3:]:
            stack.publish(SCORE, paper_id, queue="parse")
        wait_until(lambda: len(stack.scores_per_paper()) == 6, 90, "the worker to reconnect and score the rest")
    finally:
        stop_celery_worker(worker)
    assert stack.scores_per_paper() == {paper_id: 1 for paper_id in papers}


def test_work_sent_while_postgres_is_down_completes_when_it_is_back(stack: Stack) -> None:
    [paper_id] = stack.paper_ids(1)
    worker = stack.worker("db-outage")
    try:
        stack.postgres.stop()
        stack.publish(SCORE, paper_id, queue="parse")
        time.sleep(4)  # the task runs, meets the outage and is scheduled for retry
        stack.postgres.start()
        wait_until(lambda: stack.scores_per_paper().get(paper_id) == 1, 90, "the retried task to score the paper")
    finally:
        stop_celery_worker(worker)
    log = (stack.log_dir / "db-outage.log").read_text()
    assert "Retry in" in log, "the task should have been retried, not failed"
    assert stack.scores_per_paper() == {paper_id: 1}


def test_a_task_whose_worker_is_killed_is_redelivered_and_takes_effect_once(stack: Stack) -> None:
    papers = stack.paper_ids(4)
    assert len(papers) == 4, "the seed corpus should hold at least four papers"
    # A score takes milliseconds: a worker could finish every task between its "received" line and the
    # kill (it did twice on a loaded 2-core CI). Holding the papers' row locks keeps the task in flight:
    # score_paper's transaction waits on its SELECT ... FOR UPDATE until the kill, and dies uncommitted.
    lock = psycopg.connect(stack.postgres.url, connect_timeout=5)
    try:
        lock.execute("SELECT id FROM papers_paper WHERE id = ANY(%s) FOR UPDATE", (papers,))
        worker = stack.worker("killed")
        for paper_id in papers:
            stack.publish(SCORE, paper_id, queue="parse")
        wait_until(lambda: "received" in (stack.log_dir / "killed.log").read_text(), 60, "the worker to take a task")
        wait_until(lambda: stack.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                       "AND pid <> %s", lock.info.backend_pid)[0][0], 60,
                   "the task to wait on a paper's row lock")
        # Kill the whole worker (parent and pool) with SIGKILL while it holds that task: no acknowledgement
        # can be sent, so the broker must hand the unfinished work to the next worker.
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        lock.rollback()
        lock.close()

    taken = re.findall(r"\[([0-9a-f-]{36})\] received", (stack.log_dir / "killed.log").read_text())
    finished = re.findall(r"\[([0-9a-f-]{36})\] succeeded", (stack.log_dir / "killed.log").read_text())
    unfinished = set(taken) - set(finished)
    assert unfinished, "the worker should have died holding a task"

    survivor = stack.worker("survivor")
    try:
        wait_until(lambda: len(stack.scores_per_paper()) == len(papers), 120, "redelivery to the new worker")
    finally:
        stop_celery_worker(survivor)
    survivor_log = (stack.log_dir / "survivor.log").read_text()
    assert all(f"[{task_id}] succeeded" in survivor_log for task_id in unfinished)
    assert stack.scores_per_paper() == {paper_id: 1 for paper_id in papers}

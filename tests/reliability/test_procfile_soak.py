"""The Procfile stack on one machine, then a bounded soak: API traffic while the pipeline works.

honcho runs every process of the Procfile (web with several gunicorn workers, one Celery worker per
queue, beat, the LLM server) against a private PostgreSQL and Redis. The soak sends a fixed number
of API requests from 8 threads while the workers score the whole seed corpus, then reconciles:
every request answered without a 5xx, every paper scored exactly once.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import requests
from celery import Celery

from tests.conftest import ROOT, wait_until
from tests.reliability.conftest import (
    free_port,
    http_status,
    manage,
    running_private_postgres,
    running_private_redis,
)

pytestmark = pytest.mark.slow
PROCESSES = ("web", "crawl", "parse", "extract", "digest", "beat", "llm")
SOAK_REQUESTS = 400
ADVICE = {"gpu": "A100-SXM4-80GB", "model": "meta-llama/Llama-3.1-8B-Instruct",
          "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}}


@dataclass
class Stack:
    web: str
    llm: str
    database_url: str
    broker_url: str
    log: Path


@pytest.fixture(scope="module")
def procfile_stack(tmp_path_factory) -> Iterator[Stack]:
    with running_private_postgres() as postgres, running_private_redis(tmp_path_factory.mktemp("redis")) as redis:
        web_port, llm_port = free_port(), free_port()
        env = {**os.environ, "DATABASE_URL": postgres.url, "CELERY_BROKER_URL": redis.url,
               "INFRAWIKI_PORT": str(web_port), "INFRAWIKI_LLM_PORT": str(llm_port), "WEB_CONCURRENCY": "3",
               "PYTHONUNBUFFERED": "1",
               # the tests' 0.5B model: this soaks the Procfile's processes, and the 1.5B extraction model
               # would hold ~7 GB and minutes of a 2-core CI machine (its assembly is tests/inference/test_default_model)
               "INFRAWIKI_MODEL": "default"}
        manage("load_seed", env=env)
        log = tmp_path_factory.mktemp("honcho") / "honcho.log"
        with open(log, "w") as out:
            honcho = subprocess.Popen([str(ROOT / ".venv" / "bin" / "honcho"), "start", "-f", "Procfile"], cwd=ROOT,
                                      env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        stack = Stack(web=f"http://127.0.0.1:{web_port}", llm=f"http://127.0.0.1:{llm_port}",
                      database_url=postgres.url, broker_url=redis.url, log=log)
        try:
            wait_until(lambda: http_status(stack.web + "/health") == 200, 120, "the web process")
            for queue in ("crawl", "parse", "extract", "digest"):
                wait_until(lambda q=queue: f"{q}@" in log.read_text() and "ready." in log.read_text(), 120,
                           f"the {queue} worker")
            wait_until(lambda: http_status(stack.llm + "/health") == 200, 300,
                       "the LLM server to load the model")
            yield stack
        finally:
            os.killpg(honcho.pid, signal.SIGTERM)
            try:
                honcho.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(honcho.pid, signal.SIGKILL)


def test_honcho_runs_every_procfile_process_as_its_own_process(procfile_stack: Stack) -> None:
    text = procfile_stack.log.read_text()
    for name in PROCESSES:
        assert f"{name}.1 started" in text, f"{name} was not started"
    assert "Booting worker" in text and text.count("Booting worker") >= 3, "web should run several gunicorn workers"
    models = requests.get(procfile_stack.llm + "/v1/models", timeout=10).json()
    assert models["data"], "the LLM server lists its model"


def test_api_traffic_while_the_pipeline_scores_the_corpus_has_no_server_errors(procfile_stack: Stack) -> None:
    with psycopg.connect(procfile_stack.database_url) as conn:
        paper_ids = [row[0] for row in conn.execute("SELECT id FROM papers_paper ORDER BY id")]
    publisher = Celery("soak", broker=procfile_stack.broker_url, set_as_current=False)
    with publisher.connection_for_write() as connection:
        for paper_id in paper_ids:
            publisher.send_task("papers.tasks.score_paper_task", args=[paper_id], queue="parse",
                                connection=connection)

    web = procfile_stack.web
    calls = [
        lambda s: s.get(f"{web}/api/papers/", timeout=30),
        lambda s: s.get(f"{web}/api/papers/?search=cache", timeout=30),
        lambda s: s.get(f"{web}/api/scores/", timeout=30),
        lambda s: s.get(f"{web}/", timeout=30),
        lambda s: s.post(f"{web}/api/advisor/recommend", data=json.dumps(ADVICE),
                         headers={"Content-Type": "application/json"}, timeout=30),
    ]

    def worker(offset: int) -> Counter:
        statuses: Counter = Counter()
        with requests.Session() as session:
            for i in range(offset, SOAK_REQUESTS, 8):
                statuses[calls[i % len(calls)](session).status_code] += 1
        return statuses

    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        statuses = sum(pool.map(worker, range(8)), Counter())
    elapsed = time.monotonic() - started
    print(f"soak: {SOAK_REQUESTS} requests in {elapsed:.1f} s, statuses {dict(statuses)}")

    assert sum(statuses.values()) == SOAK_REQUESTS
    assert not [code for code in statuses if code >= 500], statuses
    assert statuses[200] >= SOAK_REQUESTS * 0.95, statuses  # only throttling (429) may refuse a few

    def scored() -> int:
        with psycopg.connect(procfile_stack.database_url) as conn:
            return conn.execute("SELECT count(DISTINCT paper_id), count(*) FROM papers_score").fetchone()
    wait_until(lambda: scored()[0] == len(paper_ids), 300, "the pipeline to score every paper")
    assert scored() == (len(paper_ids), len(paper_ids)), "each paper scored exactly once"

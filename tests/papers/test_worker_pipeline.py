"""End to end with a real Celery worker process on the real Redis: the crawl task reads a replayed
arXiv search, queues a download → parse chain per new paper, the downloads come from a loopback
PDF host (arXiv's PDF links in the replay point at it), and each paper ends up parsed and handed
to the ontology. The worker consumes only the crawl and parse queues, so the handover messages
wait in Redis where the test counts them (the ontology's own tests run its worker)."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from papers.models import Paper, Section
from tests.papers.replay import ArxivReplay

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SMALL_PDF = "2401.08671"
DONE = {Paper.Status.PARSED, Paper.Status.EXTRACTING, Paper.Status.WAITING, Paper.Status.EXTRACTED}


@pytest.fixture
def replay_with_pdfs(corpus_dir: Path) -> Iterator[ArxivReplay]:
    recorded = corpus_dir / "arxiv_atom" / "arxiv_py_2026_recorded"
    with ArxivReplay(recorded, pdf=corpus_dir / "pdfs" / f"{SMALL_PDF}.pdf") as server:
        yield server


@pytest.fixture
def celery_worker_queues() -> str:
    return "crawl,parse"


@pytest.fixture
def worker(request, replay_with_pdfs: ArxivReplay, tmp_path: Path, monkeypatch) -> Iterator[dict]:
    """The shared worker fixture, started with the crawl and download settings of this test."""
    for name, value in {
        "ARXIV_API_URL": f"{replay_with_pdfs.url}/api/query", "ARXIV_DELAY_S": "0.1", "ARXIV_PAGE_SIZE": "10",
        "DOWNLOAD_ALLOWED_HOSTS": "127.0.0.1", "DOWNLOAD_ALLOW_LOOPBACK": "1",
        "INFRAWIKI_DATA_DIR": str(tmp_path / "data"),
    }.items():
        monkeypatch.setenv(name, value)
    worker = request.getfixturevalue("celery_redis_worker")
    yield worker
    client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
    for key in client.scan_iter(f"{worker['prefix']}*"):
        client.delete(key)


def test_crawl_download_and_parse_run_as_a_chain_on_a_real_worker(worker, replay_with_pdfs: ArxivReplay) -> None:
    from papers.tasks import crawl_arxiv_task

    result = crawl_arxiv_task.apply_async(kwargs={"query": "testing", "max_results": 10})
    assert len(result.get(timeout=60)["new"]) == 10
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        statuses = list(Paper.objects.values_list("status", flat=True))
        if len(statuses) == 10 and all(s in DONE or s == Paper.Status.FAILED for s in statuses):
            break
        time.sleep(1)
    failed = dict(Paper.objects.filter(status=Paper.Status.FAILED).values_list("arxiv_id", "failure_reason"))
    assert not failed, failed
    assert Paper.objects.filter(status__in=DONE).count() == 10, worker["log"].read_text()[-3000:]
    assert Section.objects.filter(paper__arxiv_id="2202.12139").count() >= 5
    pdf_requests = [r for r in replay_with_pdfs.requests if r["path"].startswith("/pdf/")]
    assert len(pdf_requests) == 10
    log = worker["log"].read_text()
    assert log.count("Task papers.tasks.parse_pdf_task") >= 20  # 10 received + 10 succeeded
    waiting = redis.Redis.from_url(worker["env"]["CELERY_BROKER_URL"]).lrange(f"{worker['prefix']}extract", 0, -1)
    handed_over = [json.loads(m)["headers"]["task"] for m in waiting]
    assert handed_over == ["papers.tasks.extract_paper_task"] * 10, "each parse queues its extraction"

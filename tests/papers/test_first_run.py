"""The first run starts the work, and an outage is said plainly and healed by itself: the real
`arxiv` client and PDF downloads against a loopback replay of recorded arXiv answers, with the
tasks run eagerly (each retry at once), server up, then down, then up again."""
from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from papers.models import Paper, SourceHealth
from papers.services.reachability import health
from papers.tasks import crawl_arxiv_task, resume_work_task
from tests.papers.replay import ArxivReplay

pytestmark = pytest.mark.django_db
SMALL_PDF = "2401.08671"  # no tables: the fastest corpus paper to parse


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/query"  # nothing listens there any more: arXiv is down


@pytest.fixture
def arxiv_up(corpus_dir: Path, corpus_pdfs: dict[str, Path], settings, data_dir) -> Iterator[ArxivReplay]:
    with ArxivReplay(corpus_dir / "arxiv_atom" / "arxiv_py_2026_recorded", pdf=corpus_pdfs[SMALL_PDF]) as server:
        settings.ARXIV_API_URL = f"{server.url}/api/query"
        settings.ARXIV_DELAY_S = 0.0
        settings.ARXIV_QUERY, settings.ARXIV_MAX_RESULTS, settings.ARXIV_PAGE_SIZE = "testing", 10, 10
        settings.DOWNLOAD_ALLOWED_HOSTS = ["127.0.0.1"]
        settings.DOWNLOAD_ALLOW_LOOPBACK = True
        yield server


@pytest.fixture
def eager(memory_broker):
    """Tasks sent by the tasks run at once in this process (extraction, sent by name, stays queued)."""
    memory_broker.conf.task_always_eager = True
    try:
        yield memory_broker
    finally:
        memory_broker.conf.task_always_eager = False


def waiting_seed_paper(server: ArxivReplay) -> Paper:
    return Paper.objects.create(arxiv_id="2309.06180", version=0, title="a seed entry",
                                pdf_url=f"{server.url}/pdf/2309.06180")


def test_the_first_run_crawls_at_once_and_fetches_the_waiting_pdfs(arxiv_up, eager, client, settings) -> None:
    seed = waiting_seed_paper(arxiv_up)
    assert resume_work_task.delay().get() == {"action": "crawl"}  # what `make run` sends
    seed.refresh_from_db()
    assert seed.status == Paper.Status.PARSED and seed.pdf_path
    assert Paper.objects.filter(status=Paper.Status.PARSED).count() == 11  # 10 crawled + the seed paper
    assert health().reachable is True
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert "arXiv answered at" in page and "0 papers waiting for their PDF" in page
    assert "11 papers known, 11 read" in page and "/min" in page  # the parse rate of the last minutes

    settings.ARXIV_API_URL = closed_port_url()
    crawl_arxiv_task.delay()  # the nightly crawl, with arXiv down
    assert health().reachable is False
    page = client.get(reverse("frontend:pipeline")).content.decode()
    assert "arXiv unreachable since" in page and "showing the bundled knowledge" in page


def test_offline_the_dashboard_says_so_and_the_work_resumes_when_arxiv_returns(arxiv_up, eager, client,
                                                                                settings) -> None:
    seed = waiting_seed_paper(arxiv_up)
    online = settings.ARXIV_API_URL
    settings.ARXIV_API_URL = closed_port_url()
    resume_work_task.delay()
    row = health()
    assert row.reachable is False and row.unreachable_since and row.next_try_at > timezone.now()
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert "arXiv unreachable since" in page and "showing the bundled knowledge" in page
    assert "1 paper waiting for its PDF" in page and "next try at" in page
    assert not [r for r in arxiv_up.requests if r["path"].startswith("/pdf/")]  # no download attempted offline
    assert resume_work_task.delay().get()["action"] == "wait"  # before the next try nothing is sent

    settings.ARXIV_API_URL = online  # the network is back ...
    SourceHealth.objects.update(next_try_at=timezone.now() - timedelta(seconds=1))  # ... and the next try is due
    assert resume_work_task.delay().get() == {"action": "crawl"}
    seed.refresh_from_db()
    assert seed.status == Paper.Status.PARSED and health().reachable is True
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert "unreachable" not in page and "arXiv answered at" in page

"""The first run starts the work, and an outage is said plainly and healed by itself: the real
`arxiv` client and PDF downloads against a loopback replay of recorded arXiv answers, with the
the crawl worker's steps run in the test process (each retry at once), server up, then down, then up again."""
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
from papers.tasks import crawl_arxiv_task, pipeline_for, resume_work_task
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


def take_queued(app, queue: str) -> list[tuple[str, list, str | None]]:
    """Take the messages sent to `queue` (the in-memory broker): (task name, args, eta)."""
    taken = []
    with app.connection_for_write() as conn:
        simple = conn.SimpleQueue(queue)
        while True:
            try:
                message = simple.get(block=False)
            except simple.Empty:
                return taken
            taken.append((message.headers["task"], message.payload[0], message.headers.get("eta")))
            message.ack()


def run_crawl(app) -> list[int]:
    """What the crawl worker does with the queued crawl: run it, and return the papers whose
    download it queued (in order), leaving those downloads unrun."""
    queued = take_queued(app, "crawl")
    assert [name for name, *_ in queued] == ["papers.tasks.crawl_arxiv_task"]
    crawl_arxiv_task.apply()
    return [args[0] for name, args, _ in take_queued(app, "crawl") if name == "papers.tasks.download_pdf_task"]


def waiting_seed_paper(server: ArxivReplay) -> Paper:
    return Paper.objects.create(arxiv_id="2309.06180", version=0, title="a seed entry",
                                pdf_url=f"{server.url}/pdf/2309.06180")


def test_the_first_run_crawls_at_once_and_fetches_the_waiting_pdfs(arxiv_up, memory_broker, client,
                                                                  settings) -> None:
    seed = waiting_seed_paper(arxiv_up)
    assert resume_work_task.apply().get() == {"action": "crawl"}  # what `make run` sends: the crawl starts now
    downloads = run_crawl(memory_broker)
    assert health().reachable is True
    assert sorted(downloads) == sorted(Paper.objects.values_list("pk", flat=True))  # 10 crawled + the seed paper
    assert downloads[-1] == seed.pk and Paper.objects.filter(pdf_queued_at__isnull=False).count() == 11
    pipeline_for(seed.pk).apply()  # the seed paper's queued chain: download, parse (extraction is queued)
    seed.refresh_from_db()
    assert seed.is_read and seed.pdf_path and seed.pages.exists()
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert "arXiv answered at" in page and "11 papers known, 1 read" in page
    assert "/min" in page  # the download and parse rates of the last minutes

    settings.ARXIV_API_URL = closed_port_url()
    crawl_arxiv_task.apply()  # the nightly crawl, with arXiv down (eager: every retry at once)
    assert health().reachable is False
    page = client.get(reverse("frontend:pipeline")).content.decode()
    assert "arXiv unreachable since" in page and "showing the bundled knowledge" in page


def test_offline_the_dashboard_says_so_and_the_work_resumes_when_arxiv_returns(arxiv_up, memory_broker, client,
                                                                                settings) -> None:
    seed = waiting_seed_paper(arxiv_up)
    online = settings.ARXIV_API_URL
    settings.ARXIV_API_URL = closed_port_url()
    resume_work_task.apply()
    take_queued(memory_broker, "crawl")
    crawl_arxiv_task.apply()
    row = health()
    assert row.reachable is False and row.unreachable_since and row.next_try_at > timezone.now()
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert "arXiv unreachable since" in page and "showing the bundled knowledge" in page
    assert "1 paper waiting for its PDF" in page and "next try at" in page
    assert resume_work_task.apply().get()["action"] == "wait"  # before the next try nothing is sent
    assert take_queued(memory_broker, "crawl") == []  # and no download is queued while offline

    settings.ARXIV_API_URL = online  # the network is back ...
    SourceHealth.objects.update(next_try_at=timezone.now() - timedelta(seconds=1))  # ... and the next try is due
    assert resume_work_task.apply().get() == {"action": "crawl"}
    assert seed.pk in run_crawl(memory_broker)
    assert health().reachable is True
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert "unreachable" not in page and "arXiv answered at" in page

"""The PDF pipeline steps: safe download (hosts, private addresses, size cap, redirects), storage by
sha256, parse into sections and tables, idempotent re-runs, and every failure recorded on the paper
with a reason while other papers carry on and nothing stored is lost."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from papers.models import Paper, PipelineEvent, Section
from papers.services import download_paper_pdf, parse_paper_pdf
from papers.tasks import download_pdf_task, pipeline_for
from tests.papers.replay import PdfHost

pytestmark = pytest.mark.django_db
SMALL_PDF = "2401.08671"  # no tables: the fastest corpus paper to parse


@pytest.fixture
def host(settings, data_dir, memory_broker) -> Iterator[PdfHost]:
    settings.DOWNLOAD_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.DOWNLOAD_ALLOW_LOOPBACK = True
    settings.DOWNLOAD_TIMEOUT_S = 10
    with PdfHost() as server:
        yield server


@pytest.fixture
def pdf_bytes(corpus_pdfs: dict[str, Path]) -> bytes:
    return corpus_pdfs[SMALL_PDF].read_bytes()


def paper_at(url: str, arxiv_id: str = SMALL_PDF) -> Paper:
    return Paper.objects.create(arxiv_id=arxiv_id, version=1, title="t", pdf_url=url)


def test_a_downloaded_pdf_is_stored_by_sha256_and_parsed(host, pdf_bytes, data_dir) -> None:
    paper = paper_at(host.serve_pdf("/pdf/ok", pdf_bytes))
    assert download_paper_pdf(paper)
    paper.refresh_from_db()
    assert paper.status == Paper.Status.DOWNLOADED
    assert Path(paper.pdf_path) == data_dir / "pdfs" / f"{paper.pdf_sha256}.pdf"
    assert Path(paper.pdf_path).read_bytes() == pdf_bytes
    parsed = parse_paper_pdf(paper)
    paper.refresh_from_db()
    assert paper.status == Paper.Status.PARSED and paper.page_count == parsed.page_count
    assert paper.sections.count() == len(parsed.sections) >= 5
    assert paper.environment["gpu_models"]


def sent_task_names(app) -> list[str]:
    with app.connection_for_write() as conn:
        queue = conn.SimpleQueue("extract")
        names = []
        while True:
            try:
                message = queue.get(block=False)
            except queue.Empty:
                return names
            names.append(message.headers["task"])
            message.ack()


def test_a_parsed_paper_is_queued_for_extraction_on_the_extract_queue(host, pdf_bytes, memory_broker) -> None:
    paper = paper_at(host.serve_pdf("/pdf/ok", pdf_bytes))
    pipeline_for(paper.pk).apply()
    assert sent_task_names(memory_broker) == ["papers.tasks.extract_paper_task"]


def test_re_running_the_chain_changes_nothing(host, pdf_bytes) -> None:
    paper = paper_at(host.serve_pdf("/pdf/ok", pdf_bytes))
    pipeline_for(paper.pk).apply()
    paper.refresh_from_db()
    sections = list(Section.objects.filter(paper=paper).values_list("pk", flat=True))
    assert paper.status == Paper.Status.PARSED and sections
    requests_before = len(host.requests)
    pipeline_for(paper.pk).apply()
    paper.refresh_from_db()
    assert paper.status == Paper.Status.PARSED
    assert list(Section.objects.filter(paper=paper).values_list("pk", flat=True)) == sections
    assert len(host.requests) == requests_before, "a parsed version is not downloaded again"


@pytest.mark.parametrize(("setup", "expected"), [
    ("loopback_not_allowed", "non-public address 127.0.0.1"),
    ("host_not_allowed", "not in DOWNLOAD_ALLOWED_HOSTS"),
    ("too_large", "PDF_MAX_BYTES"),
    ("html", "did not return a PDF"),
    ("missing", "HTTP 404"),
    ("redirect_elsewhere", "not in DOWNLOAD_ALLOWED_HOSTS"),
])
def test_a_refused_download_is_a_recorded_permanent_failure(host, pdf_bytes, settings, setup, expected) -> None:
    url = host.serve_pdf("/pdf/ok", pdf_bytes)
    if setup == "loopback_not_allowed":
        settings.DOWNLOAD_ALLOW_LOOPBACK = False
    elif setup == "host_not_allowed":
        settings.DOWNLOAD_ALLOWED_HOSTS = ["arxiv.org"]
    elif setup == "too_large":
        settings.PDF_MAX_BYTES = 100_000
    elif setup == "html":
        host.routes["/pdf/ok"] = (200, [("Content-Type", "text/html")], b"<html>captcha</html>")
    elif setup == "missing":
        url = f"{host.url}/pdf/gone"
    elif setup == "redirect_elsewhere":
        host.routes["/pdf/ok"] = (302, [("Location", "http://example.org/x.pdf")], b"")
    paper = paper_at(url)
    assert download_paper_pdf(paper) is False
    paper.refresh_from_db()
    assert paper.status == Paper.Status.FAILED and paper.failure_stage == "download"
    assert expected in paper.failure_reason
    assert PipelineEvent.objects.filter(paper=paper, level="error", message=paper.failure_reason).exists()


def test_a_busy_server_is_retried_then_recorded(host) -> None:
    host.routes["/pdf/busy"] = (503, [("Content-Type", "text/plain")], b"busy")
    paper = paper_at(f"{host.url}/pdf/busy")
    download_pdf_task.apply(args=[paper.pk])  # eager: the retries run at once
    paper.refresh_from_db()
    assert paper.status == Paper.Status.FAILED
    assert "HTTP 503" in paper.failure_reason and "gave up after 5 retries" in paper.failure_reason
    assert len([r for r in host.requests if r["path"] == "/pdf/busy"]) == 6


def test_a_corrupt_new_version_fails_at_parse_and_keeps_the_old_sections(host, pdf_bytes) -> None:
    paper = paper_at(host.serve_pdf("/pdf/ok", pdf_bytes))
    pipeline_for(paper.pk).apply()
    before = Section.objects.filter(paper=paper).count()
    Paper.objects.filter(pk=paper.pk).update(status=Paper.Status.NEW, version=2,
                                             pdf_url=host.serve_pdf("/pdf/v2", b"%PDF-1.5\n" + b"\x00garbage" * 50))
    pipeline_for(paper.pk).apply()
    paper.refresh_from_db()
    assert paper.status == Paper.Status.FAILED and paper.failure_stage == "parse"
    assert "corrupt" in paper.failure_reason or "no pages" in paper.failure_reason
    assert Section.objects.filter(paper=paper).count() == before > 0


def test_one_bad_paper_does_not_stop_the_others(host, pdf_bytes) -> None:
    bad = paper_at(host.serve_pdf("/pdf/bad", b"not a pdf at all"), "1111.11111")
    good = paper_at(host.serve_pdf("/pdf/good", pdf_bytes))
    for paper in (bad, good):
        pipeline_for(paper.pk).apply()
    assert Paper.objects.get(pk=bad.pk).status == Paper.Status.FAILED
    assert Paper.objects.get(pk=good.pk).status == Paper.Status.PARSED


def test_a_paper_without_a_pdf_link_fails_with_a_hint(host) -> None:
    paper = paper_at("")
    assert download_paper_pdf(paper) is False
    assert "no PDF link" in Paper.objects.get(pk=paper.pk).failure_reason

"""Extraction of stored papers: statuses, failures a person can act on, and the Celery task on a real worker."""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from ontology.models import ExtractionRun, Fact, SearchDocument
from papers.services.extraction import ExtractionFailed, extract_paper

TEXT = ("Sys: fast serving. We present Sys, a serving engine for large language models. "
        "All experiments run on 8 NVIDIA A100 GPUs with CUDA 12.1. We set the block size to 16 tokens. "
        "Larger blocks reduce kernel overhead but increase internal fragmentation. " * 3)


def _pdf(path: Path, text: str | None) -> Path:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    if text:
        page.insert_textbox(pymupdf.Rect(40, 40, 560, 800), text, fontsize=9)
    doc.save(path)
    return path


def _paper(pdf: Path, arxiv_id: str = "2401.00001"):
    from papers.models import Paper

    return Paper.objects.create(arxiv_id=arxiv_id, title="Sys: fast serving", pdf_path=str(pdf), status="parsed")


@pytest.mark.django_db
def test_extracting_a_stored_paper_stores_indexed_facts_and_marks_it_extracted(tmp_path):
    paper = _paper(_pdf(tmp_path / "sys.pdf", TEXT))
    run = extract_paper(paper.pk, use_llm=False)
    paper.refresh_from_db()
    assert paper.status == "extracted" and run.status == "done" and run.facts_created > 0
    assert Fact.objects.filter(paper=paper, parameter="block_size", value="16").exists()
    assert SearchDocument.objects.filter(paper=paper, doc_type="fact").count() == Fact.objects.filter(paper=paper).count()
    assert extract_paper(paper.pk, use_llm=False).facts_created == 0  # idempotent


@pytest.mark.django_db
def test_a_pdf_without_a_text_layer_fails_the_paper_with_a_reason(tmp_path):
    paper = _paper(_pdf(tmp_path / "scan.pdf", None))
    with pytest.raises(ExtractionFailed, match="no text layer"):
        extract_paper(paper.pk, use_llm=False)
    paper.refresh_from_db()
    assert paper.status == "failed" and "OCR" in paper.failure_reason
    assert ExtractionRun.objects.get(paper=paper).status == "failed"
    with pytest.raises(CommandError, match="no text layer"):
        call_command("extract_pdf", str(tmp_path / "scan.pdf"), "--json")


@pytest.mark.django_db
def test_a_missing_pdf_is_a_permanent_failure(tmp_path):
    paper = _paper(tmp_path / "gone.pdf")
    with pytest.raises(ExtractionFailed, match="no PDF stored"):
        extract_paper(paper.pk, use_llm=False)


def test_extract_pdf_prints_the_exchange_format(tmp_path, capsys, db):
    call_command("extract_pdf", str(_pdf(tmp_path / "sys.pdf", TEXT)), "--json", "--no-llm")
    payload = json.loads(capsys.readouterr().out)
    assert payload["paper"]["subject"] == "Sys"
    kinds = {f["kind"] for f in payload["facts"]}
    assert {"constraint", "parameter", "trade_off"} <= kinds


@pytest.fixture
def dead_llm(monkeypatch):
    """INFRAWIKI_LLM_URL pointing at a port nobody listens on (set before the worker starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("INFRAWIKI_LLM_URL", f"http://127.0.0.1:{port}/v1")
    return port


@pytest.mark.slow
def test_an_unreachable_llm_server_leaves_the_paper_waiting_and_the_task_retrying(tmp_path, dead_llm, celery_redis_worker):
    from infrawiki.celery import app

    paper = _paper(_pdf(tmp_path / "sys.pdf", TEXT))
    app.send_task("papers.tasks.extract_paper_task", args=[paper.pk], queue="extract")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        paper.refresh_from_db()
        if paper.status == "waiting" and "Retry in" in celery_redis_worker["log"].read_text():
            break
        time.sleep(0.5)
    assert paper.status == "waiting", celery_redis_worker["log"].read_text()[-3000:]
    assert "LLM server" in paper.failure_reason
    assert ExtractionRun.objects.filter(paper=paper, status="waiting").exists()
    assert "Retry in" in celery_redis_worker["log"].read_text()
    assert not Fact.objects.filter(paper=paper).exists()


@pytest.mark.django_db
def test_an_extraction_queued_for_a_paper_that_was_merged_away_is_skipped_not_raised():
    from papers.tasks import extract_paper_task

    paper = _paper(Path("/nonexistent.pdf"))
    gone = paper.pk
    paper.delete()
    assert extract_paper_task.apply(args=[gone]).get() == {"paper_id": gone, "skipped": "missing"}

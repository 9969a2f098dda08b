"""One reading of a PDF: parse, store and extract open the file once; extraction reads the stored pages."""
from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest
from django.core.management import call_command

from ontology.models import Fact, SearchDocument
from papers.models import PaperPage
from papers.services.extraction import extract_paper, stored_document
from papers.services.pdfs import ingest_pdf_file
from tests.papers.pdfs import SERVING_TEXT, text_pdf


class _Opens:
    """The files pymupdf.open read, logged to a file so opens in the bounded parse's child process count."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def paths(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def pdf_opens(monkeypatch, tmp_path) -> _Opens:
    """Every pymupdf.open of a file during the test, in this process or its children (the real open
    still runs)."""
    opens = _Opens(tmp_path / "pdf-opens.log")
    real_open = pymupdf.open

    def counting_open(*args, **kwargs):
        if args and isinstance(args[0], str | Path):
            with opens.log.open("a") as log:
                log.write(f"{args[0]}\n")
        return real_open(*args, **kwargs)

    monkeypatch.setattr(pymupdf, "open", counting_open)
    return opens


@pytest.mark.django_db
def test_parse_store_and_extract_open_the_pdf_exactly_once(tmp_path, data_dir, pdf_opens) -> None:
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, "Page two. " + SERVING_TEXT, title="Sys: fast serving")
    ingested = ingest_pdf_file(pdf)
    run = extract_paper(ingested.paper.pk, use_llm=False)
    assert run.status == "done" and run.facts_created > 0
    assert pdf_opens.paths() == [str(pdf)]


@pytest.mark.django_db
def test_pages_are_stored_once_in_quote_form_and_every_quote_is_a_span_of_its_page(tmp_path, data_dir) -> None:
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, "Page two. " + SERVING_TEXT, title="Sys: fast serving")
    paper = ingest_pdf_file(pdf).paper
    pages = list(PaperPage.objects.filter(paper=paper).order_by("number").values_list("number", "text"))
    assert [number for number, _ in pages] == [1, 2] == list(range(1, paper.page_count + 1))
    assert all("\n" not in text and "  " not in text for _, text in pages)
    assert pages[1][1].startswith("Page two.")
    extract_paper(paper.pk, use_llm=False)
    texts = dict(pages)
    facts = list(Fact.objects.filter(paper=paper))
    assert facts and all(fact.quote in texts[fact.page] for fact in facts)
    assert stored_document(paper).page_texts == [text for _, text in pages]


@pytest.mark.django_db
def test_a_stored_pdf_is_searchable_before_any_extraction(tmp_path, data_dir) -> None:
    paper = ingest_pdf_file(text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving")).paper
    assert SearchDocument.objects.filter(paper=paper, doc_type="paper").exists()


@pytest.mark.django_db
def test_extract_pdf_reads_the_file_once_and_keeps_its_json_shape(tmp_path, capsys, pdf_opens) -> None:
    pdf = text_pdf(tmp_path / "2401.00001.pdf", SERVING_TEXT, title="Sys: fast serving")
    call_command("extract_pdf", str(pdf), "--json", "--no-llm")
    payload = json.loads(capsys.readouterr().out)
    assert pdf_opens.paths() == [str(pdf)]
    assert set(payload) == {"paper", "facts"}
    assert {"title", "arxiv_id", "subject", "pages", "stats", "rejected_outputs"} <= set(payload["paper"])
    assert payload["paper"]["arxiv_id"] == "2401.00001" and payload["paper"]["pages"] == 1
    assert payload["facts"] and set(payload["facts"][0]) == {
        "kind", "subject", "parameter", "value", "unit", "condition", "effect", "page", "quote", "confidence",
        "extractor"}


@pytest.mark.django_db
def test_a_paper_parsed_before_pages_were_stored_is_parsed_once_more_then_extracted(tmp_path, data_dir) -> None:
    paper = ingest_pdf_file(text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving")).paper
    PaperPage.objects.filter(paper=paper).delete()
    assert extract_paper(paper.pk, use_llm=False).facts_created > 0
    assert PaperPage.objects.filter(paper=paper).count() == 1


@pytest.mark.django_db
def test_import_pdfs_hashes_the_file_once_and_builds_its_search_entries_once(tmp_path, data_dir, monkeypatch) -> None:
    """One PDF through `import_pdfs`: one sha256 of its bytes, one build of the paper's own search
    entries (after extraction, by ontology.services.ingest_document), and the facts indexed."""
    import hashlib

    import ontology.services
    import papers.services.pdfs
    from papers.services.imports import import_pdf

    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving")
    size = pdf.stat().st_size
    hashed: list[int] = []
    real_sha256 = hashlib.sha256

    def counting_sha256(data=b"", **kwargs):
        hashed.append(len(data))
        return real_sha256(data, **kwargs)

    indexed: list[int] = []
    real_index = ontology.services.index_paper

    def counting_index(paper):
        indexed.append(paper.pk)
        return real_index(paper)

    monkeypatch.setattr(hashlib, "sha256", counting_sha256)
    monkeypatch.setattr(ontology.services, "index_paper", counting_index)
    monkeypatch.setattr(papers.services.pdfs, "index_paper", counting_index)
    outcome = import_pdf(pdf, llm=None)
    assert outcome.status == "stored" and outcome.facts > 0
    assert hashed.count(size) == 1
    assert indexed == [outcome.paper_id]
    assert SearchDocument.objects.filter(paper_id=outcome.paper_id, doc_type="paper").count() == 1
    assert (SearchDocument.objects.filter(paper_id=outcome.paper_id, doc_type="fact").count()
            == Fact.objects.filter(paper_id=outcome.paper_id).count())
    assert import_pdf(pdf, llm=None).status == "duplicate"


@pytest.mark.django_db
def test_the_stored_document_is_the_parse_in_the_same_shape(tmp_path, data_dir) -> None:
    """What the extract task hands the ontology (rebuilt from the stored rows) is the parse it stored:
    the same page texts, outline with section text, and tables with their cells."""
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, "Page two. " + SERVING_TEXT, title="Sys: fast serving")
    ingested = ingest_pdf_file(pdf)
    parsed, stored = ingested.parsed, stored_document(ingested.paper)
    assert stored.page_texts == parsed.page_texts and stored.title == parsed.title
    assert [(s.title, s.page_start, s.page_end, s.text) for s in stored.sections] == [
        (s.title, s.page_start, s.page_end, s.text) for s in parsed.sections]
    assert [(t.page, t.caption, t.cells) for t in stored.tables] == [(t.page, t.caption, t.cells) for t in parsed.tables]

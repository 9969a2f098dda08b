"""Text PostgreSQL refuses (NUL, lone surrogates) is cleaned before it is stored, on every path:
a PDF whose text layer yields NUL (as real arXiv PDFs do), and any text at all through the storage path."""
from __future__ import annotations

import pymupdf
import pytest
from django.db import DatabaseError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from papers.cleaning import clean_text, clean_value
from papers.models import Paper, PaperPage, PipelineEvent, Section, Table
from papers.pdf import ParsedPdf, ParsedSection, ParsedTable, parse_pdf
from papers.services.pdfs import ingest_pdf_file, save_parsed
from tests.papers.pdfs import SERVING_TEXT

# Every code point, surrogates included, with NUL made frequent: what a broken text layer can yield.
ANY_TEXT = st.text(st.one_of(st.just("\x00"), st.characters(codec=None, exclude_categories=())), max_size=40)
REFUSED = ("\x00", *map(chr, range(0xD800, 0xE000)))


def _nul_pdf(path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((40, 60), "Sys:\x00 NUL serving", fontsize=16, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(40, 80, 560, 800), SERVING_TEXT.replace("block size", "block\x00 size"),
                        fontsize=9)
    doc.save(path)
    return path


def test_the_generated_pdf_really_yields_nul_bytes(tmp_path) -> None:
    with pymupdf.open(_nul_pdf(tmp_path / "nul.pdf")) as doc:
        assert "\x00" in doc[0].get_text()


def test_the_parser_hands_on_no_nul(tmp_path) -> None:
    parsed = parse_pdf(_nul_pdf(tmp_path / "nul.pdf"))
    texts = [parsed.title, parsed.abstract, *parsed.page_texts, *(s.text for s in parsed.sections)]
    assert not any("\x00" in text for text in texts)
    assert "block size" in parsed.page_texts[0]


@pytest.mark.django_db
def test_a_pdf_with_nul_bytes_in_its_text_is_stored_and_leaves_no_orphan(tmp_path, data_dir) -> None:
    paper = ingest_pdf_file(_nul_pdf(tmp_path / "nul.pdf")).paper
    paper.refresh_from_db()
    assert paper.status == Paper.Status.PARSED and paper.title == "Sys: NUL serving"
    assert "block size" in PaperPage.objects.get(paper=paper, number=1).text
    assert [p.name for p in (data_dir / "pdfs").iterdir()] == [f"{paper.pdf_sha256}.pdf"]


@pytest.mark.django_db
def test_a_failed_store_removes_the_pdf_file_it_wrote(tmp_path, data_dir, monkeypatch) -> None:
    def refuse(paper):
        raise DatabaseError("the database went away")

    monkeypatch.setattr("papers.services.pdfs.index_paper", refuse)
    with pytest.raises(DatabaseError):
        ingest_pdf_file(_nul_pdf(tmp_path / "nul.pdf"))
    assert not Paper.objects.exists()
    assert list((data_dir / "pdfs").iterdir()) == []


@given(ANY_TEXT)
def test_cleaned_text_holds_nothing_postgresql_refuses_and_cleaning_twice_changes_nothing(text) -> None:
    cleaned = clean_text(text)
    assert not any(char in cleaned for char in REFUSED)
    assert clean_text(cleaned) == cleaned
    cleaned.encode("utf-8")
    if not any(char in text for char in REFUSED):
        assert cleaned == text


@pytest.mark.django_db
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=ANY_TEXT, body=ANY_TEXT, cell=ANY_TEXT, key=ANY_TEXT)
@example(title="Paged \ud800 attention", body="", cell="", key="k")  # the index must embed the stored, cleaned title
def test_any_text_through_the_storage_path_is_stored_cleaned(tmp_path, title, body, cell, key) -> None:
    Paper.objects.filter(arxiv_id="2401.00001").delete()
    paper = Paper.objects.create(arxiv_id="2401.00001", title="t", version=0)
    parsed = ParsedPdf(
        title=title or "x", abstract=body, sections=[ParsedSection(title, "1", 1, 1, 1, body)],
        tables=[ParsedTable(1, body, 1, 2, [[cell, title]])], captions=[],
        environment={key: [cell], "gpus": [{"quote": body}]}, page_texts=[body, cell], page_count=2,
    )
    save_parsed(paper, parsed, "ab" * 32, tmp_path / "x.pdf")
    paper.refresh_from_db()
    assert (paper.title, paper.abstract) == (clean_text(title or "x"), clean_text(body))
    assert paper.environment == clean_value(parsed.environment)
    assert list(PaperPage.objects.filter(paper=paper).values_list("text", flat=True)) == [clean_text(body),
                                                                                           clean_text(cell)]
    section = Section.objects.get(paper=paper)
    assert (section.title, section.text) == (clean_text(title), clean_text(body))
    table = Table.objects.get(paper=paper)
    assert table.caption == clean_text(body) and table.cells == [[clean_text(cell), clean_text(title)]]
    PipelineEvent.objects.create(paper=paper, stage="test", message=body)  # any other text column, too


@pytest.mark.django_db
def test_a_saved_paper_holds_the_text_that_was_stored_and_lookups_clean_alike() -> None:
    paper = Paper.objects.create(arxiv_id="2401.00009", title="Paged\x00 attention \ud800",
                                 environment={"gpu\x00": ["\ud800"]})
    assert paper.title == clean_text("Paged\x00 attention \ud800") == Paper.objects.get(pk=paper.pk).title
    assert paper.environment == {"gpu": ["\ufffd"]}
    assert Paper.objects.filter(title="Paged\x00 attention \ud800").exists()

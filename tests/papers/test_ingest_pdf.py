"""`ingest_pdf` and the bad files it must refuse with a reason: not a PDF, empty, truncated,
encrypted, no text layer. A refused file changes nothing that was stored."""
from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest
from django.core.management import CommandError, call_command

from papers.models import Paper, Section
from papers.pdf import PdfError, parse_pdf
from papers.services import ingest_pdf

SMALL_PDF = "2401.08671"


@pytest.fixture
def small_pdf(corpus_pdfs: dict[str, Path]) -> Path:
    return corpus_pdfs[SMALL_PDF]


def test_a_file_that_is_not_a_pdf_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "paper.pdf"
    page.write_text("<html><body>Please verify you are human</body></html>")
    with pytest.raises(PdfError, match="not a PDF"):
        parse_pdf(page)


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.pdf").write_bytes(b"")
    with pytest.raises(PdfError, match="not a PDF"):
        parse_pdf(tmp_path / "empty.pdf")


def test_a_truncated_download_is_refused_with_a_hint(tmp_path: Path, small_pdf: Path) -> None:
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(small_pdf.read_bytes()[:2000])
    with pytest.raises(PdfError, match="download it again|corrupt|no text layer"):
        parse_pdf(cut)


def test_an_encrypted_pdf_asks_for_an_unencrypted_copy(tmp_path: Path, small_pdf: Path) -> None:
    locked = tmp_path / "locked.pdf"
    pymupdf.open(small_pdf).save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    with pytest.raises(PdfError, match="password-protected"):
        parse_pdf(locked)


def test_a_pdf_without_text_asks_for_ocr(tmp_path: Path) -> None:
    doc = pymupdf.open()
    doc.new_page().draw_rect(pymupdf.Rect(10, 10, 100, 100))
    scanned = tmp_path / "scan.pdf"
    doc.save(scanned)
    with pytest.raises(PdfError, match="OCR"):
        parse_pdf(scanned)


@pytest.mark.django_db
def test_ingest_prints_the_contract_json_and_stores_the_pdf_by_sha256(small_pdf, data_dir, capsys) -> None:
    call_command("ingest_pdf", str(small_pdf), "--json")
    out = json.loads(capsys.readouterr().out)
    assert out["paper"] == {"title": "DeepSpeed-FastGen: High-throughput Text Generation for LLMs via MII and "
                                      "DeepSpeed-Inference", "arxiv_id": SMALL_PDF}
    assert len(out["sections"]) >= 5 and {"title", "page_start", "page_end", "chars"} <= set(out["sections"][0])
    assert out["tables"] == [] and out["environment"]["gpu_models"] and out["parse_s"] > 0
    paper = Paper.objects.get(arxiv_id=SMALL_PDF)
    assert Path(paper.pdf_path) == data_dir / "pdfs" / f"{paper.pdf_sha256}.pdf"


@pytest.mark.django_db
def test_ingesting_the_same_file_twice_keeps_one_set_of_rows(small_pdf, data_dir) -> None:
    first = ingest_pdf(small_pdf)
    sections = list(Section.objects.filter(paper=first).values_list("pk", flat=True))
    second = ingest_pdf(small_pdf)
    assert second.pk == first.pk
    assert list(Section.objects.filter(paper=first).values_list("pk", flat=True)) == sections


@pytest.mark.django_db
def test_an_explicit_arxiv_id_names_the_paper(small_pdf, data_dir) -> None:
    assert ingest_pdf(small_pdf, arxiv_id="2401.99999").arxiv_id == "2401.99999"


@pytest.mark.django_db
def test_a_bad_file_fails_the_command_and_leaves_stored_papers_alone(small_pdf, data_dir, tmp_path) -> None:
    paper = ingest_pdf(small_pdf, arxiv_id="2401.08671")
    before = Section.objects.filter(paper=paper).count()
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4\n%broken")
    with pytest.raises(CommandError):
        call_command("ingest_pdf", str(bad), "--arxiv-id", "2401.08671")
    assert Section.objects.filter(paper=paper).count() == before
    assert Paper.objects.get(pk=paper.pk).status == Paper.Status.PARSED
    with pytest.raises(CommandError, match="does not exist"):
        call_command("ingest_pdf", str(tmp_path / "missing.pdf"))


@pytest.mark.django_db
def test_a_seed_papers_list_title_gives_way_to_the_pdfs_title(corpus_pdfs, data_dir) -> None:
    Paper.objects.create(arxiv_id="2404.02015", version=0, title="MuxServe: Flexible Multiplexing for Efficient "
                                                                 "Multiple LLM Serving")
    paper = ingest_pdf(corpus_pdfs["2404.02015"])
    assert paper.title == "MuxServe: Flexible Spatial-Temporal Multiplexing for Multiple LLM Serving"
    crawled = Paper.objects.create(arxiv_id="2401.99999", version=2, title="arXiv title")
    assert ingest_pdf(corpus_pdfs[SMALL_PDF], arxiv_id=crawled.arxiv_id).title == "arXiv title"

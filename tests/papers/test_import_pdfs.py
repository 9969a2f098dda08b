"""`import_pdfs`: a person's folder of PDFs stored, extracted and searchable; duplicates, non-PDFs and
corrupt files handled without stopping the others."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from ontology.models import Fact, SearchDocument
from papers.models import Paper
from tests.papers.pdfs import SERVING_TEXT, text_pdf


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "my papers"
    (root / "sub").mkdir(parents=True)
    text_pdf(root / "2401.00011.pdf", SERVING_TEXT, title="Sys: fast serving", stamp="arXiv:2401.00011v1  [cs.DC]  1 Jan 2024")
    text_pdf(root / "sub" / "other.PDF", SERVING_TEXT.replace("Sys", "Ark"), title="Ark: faster serving")
    (root / "notes.txt").write_text("not a paper")
    return root


@pytest.mark.django_db
def test_a_folder_is_imported_recursively_extracted_and_searchable(folder, data_dir, capsys) -> None:
    call_command("import_pdfs", str(folder), "--no-llm")
    out = capsys.readouterr().out
    assert "2 stored, 0 duplicates skipped, 0 failed" in out
    papers = {p.arxiv_id: p for p in Paper.objects.all()}
    assert "2401.00011" in papers and len(papers) == 2  # the id from the arXiv stamp; notes.txt ignored
    assert all(p.status == Paper.Status.EXTRACTED for p in papers.values())
    assert Fact.objects.filter(paper=papers["2401.00011"], parameter="block_size").exists()
    assert SearchDocument.objects.filter(doc_type="paper").count() == 2


@pytest.mark.django_db
def test_a_duplicate_is_skipped_by_its_sha256(folder, data_dir, tmp_path, capsys) -> None:
    call_command("import_pdfs", str(folder), "--no-llm")
    copy = tmp_path / "copy-with-another-name.pdf"
    copy.write_bytes((folder / "2401.00011.pdf").read_bytes())
    call_command("import_pdfs", str(copy), str(folder), "--no-llm")
    out = capsys.readouterr().out
    assert "0 stored, 3 duplicates skipped, 0 failed" in out and "already stored as 2401.00011" in out
    assert Paper.objects.count() == 2


@pytest.mark.django_db
def test_non_pdf_and_corrupt_files_are_reported_and_the_others_imported(folder, data_dir, tmp_path, capsys) -> None:
    html = tmp_path / "download.pdf"
    html.write_text("<html>Please verify you are human</html>")
    corrupt = tmp_path / "cut.pdf"
    corrupt.write_bytes((folder / "2401.00011.pdf").read_bytes()[:300])
    with pytest.raises(CommandError, match="2 path") as error:
        call_command("import_pdfs", str(html), str(corrupt), str(folder), "--no-llm")
    assert error.value.returncode == 2
    captured = capsys.readouterr()
    assert "not a PDF" in captured.err and "cut.pdf: failed" in captured.err
    assert "2 stored, 0 duplicates skipped, 2 failed" in captured.out
    assert Paper.objects.count() == 2 and sorted(p.name for p in (data_dir / "pdfs").iterdir()) == sorted(
        f"{p.pdf_sha256}.pdf" for p in Paper.objects.all())


@pytest.mark.django_db
def test_paths_without_any_pdf_are_a_user_error(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(CommandError, match="no PDF files") as error:
        call_command("import_pdfs", str(tmp_path))
    assert error.value.returncode == 2

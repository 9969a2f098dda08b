"""Reading a PDF is bounded: pages, inflated size and time are capped (papers.pdf.bounded), the upload
spool is always emptied, the same PDF uploaded twice at once is one paper and one duplicate, and no
error a person sees names a server path or temp file."""
from __future__ import annotations

import os
import re
import threading
import time
import zlib
from pathlib import Path

import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import Client

from papers.models import Paper
from papers.pdf import PdfError
from papers.services.pdfs import ingest_pdf_file
from tests.papers.conftest import editor_client
from tests.papers.pdfs import SERVING_TEXT, text_pdf


def _with_stream(path: Path, stream: bytes, filters: str) -> Path:
    """A one-page paper whose page also draws `stream` (already encoded with `filters`) as content."""
    doc = pymupdf.open(text_pdf(path.with_suffix(".base.pdf"), SERVING_TEXT, title="Sys: fast serving"))
    xref = doc.get_new_xref()
    doc.update_object(xref, "<< >>")
    doc.update_stream(xref, stream, compress=False)
    doc.xref_set_key(xref, "Filter", filters)
    page = doc[0]
    contents = " ".join(f"{x} 0 R" for x in page.get_contents())
    doc.xref_set_key(page.xref, "Contents", f"[{contents} {xref} 0 R]")
    doc.save(path)
    return path


def _spaces_deflated(size: int) -> bytes:
    """`size` bytes of spaces (valid, empty page content) deflated fast: ~230:1."""
    packer = zlib.compressobj(1)
    block = b" " * (1 << 20)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    return b"".join(parts) + packer.flush()


def _private_names(body: str, data_dir: Path) -> list[str]:
    """Server paths and temp-file names in a page a person sees."""
    found = [str(data_dir)] if str(data_dir) in body else []
    return found + re.findall(r"/tmp/\S+|tmp[a-z0-9_]{6,}\.(?:pdf|part)", body)


def _spool(data_dir: Path) -> list[Path]:
    spool = data_dir / "uploads"
    return list(spool.iterdir()) if spool.exists() else []


def test_a_zip_bomb_upload_is_refused_in_seconds_and_leaves_nothing_behind(tmp_path, data_dir, editor) -> None:
    bomb = _with_stream(tmp_path / "bomb.pdf", _spaces_deflated(300 * 2**20), "/FlateDecode")
    assert bomb.stat().st_size < 2 * 2**20  # a small file that inflates past the 256 MiB default
    started = time.monotonic()
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("bomb.pdf", bomb.read_bytes())})
    elapsed = time.monotonic() - started
    body = response.content.decode()
    assert response.status_code == 400 and "decompression bomb" in body and elapsed < 20
    assert not _private_names(body, data_dir) and not _spool(data_dir)
    assert not Paper.objects.exists() and not list((data_dir / "pdfs").glob("*.pdf"))


def test_chained_flate_filters_are_counted_through_every_layer(tmp_path, data_dir, db, settings) -> None:
    settings.PDF_MAX_INFLATED_BYTES = 4 * 2**20
    nested = zlib.compress(_spaces_deflated(8 * 2**20))
    with pytest.raises(PdfError, match="inflates to more than 4,194,304 bytes"):
        ingest_pdf_file(_with_stream(tmp_path / "nested.pdf", nested, "[/FlateDecode /FlateDecode]"))
    assert not Paper.objects.exists()


def test_a_pdf_over_the_page_cap_is_refused_by_import_pdfs_and_the_upload_form(tmp_path, data_dir, editor,
                                                                              settings, capsys) -> None:
    many = pymupdf.open()
    for _ in range(3000):
        many.new_page()
    many[0].insert_textbox(pymupdf.Rect(40, 40, 560, 800), SERVING_TEXT, fontsize=9)
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("many.pdf", many.tobytes())})
    assert response.status_code == 400 and "3,000 pages; the limit is 300 (PDF_MAX_PAGES)" in response.content.decode()
    assert not _spool(data_dir)
    settings.PDF_MAX_PAGES = 2
    three = text_pdf(tmp_path / "three.pdf", SERVING_TEXT, SERVING_TEXT, SERVING_TEXT, title="Sys: fast serving")
    with pytest.raises(CommandError):
        call_command("import_pdfs", str(three), "--no-llm")
    assert "3 pages; the limit is 2 (PDF_MAX_PAGES)" in capsys.readouterr().err
    assert not Paper.objects.exists()


def test_a_parse_past_its_time_limit_is_stopped_and_the_upload_answers(tmp_path, data_dir, editor, settings) -> None:
    settings.PDF_PARSE_TIMEOUT_S = 0.3
    slow = text_pdf(tmp_path / "slow.pdf", *[f"Page {n}. " + SERVING_TEXT * 3 for n in range(1, 201)])
    started = time.monotonic()
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("slow.pdf", slow.read_bytes())})
    body = response.content.decode()
    assert response.status_code == 400 and "took longer than 0.3 s (PDF_PARSE_TIMEOUT_S)" in body
    assert time.monotonic() - started < 15
    assert not _private_names(body, data_dir) and not _spool(data_dir) and not Paper.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_same_pdf_uploaded_twice_at_once_is_one_paper_and_one_duplicate(tmp_path, settings) -> None:
    settings.DATA_DIR = tmp_path / "data"
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, "Page two. " + SERVING_TEXT, title="Sys: fast serving").read_bytes()
    clients = [editor_client("editor-a"), editor_client("editor-b")]
    start = threading.Barrier(len(clients))
    answers: list[tuple[int, str]] = []
    errors: list[BaseException] = []

    def upload(client: Client) -> None:
        try:
            start.wait()
            response = client.post("/upload/", {"pdf": SimpleUploadedFile("sys.pdf", pdf)}, follow=True)
            answers.append((response.status_code, response.content.decode()))
        except BaseException as exc:  # an IntegrityError surfaces here as the test client re-raises it
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=upload, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert [status for status, _ in answers] == [200, 200]
    assert Paper.objects.count() == 1
    paper = Paper.objects.get()
    assert sum("is already stored as" in body for _, body in answers) == 1
    assert sum(f"stored as {paper.arxiv_id} and searchable" in body for _, body in answers) == 1


def test_an_upload_sweeps_spooled_copies_a_killed_request_left_behind(tmp_path, data_dir, editor) -> None:
    spool = data_dir / "uploads"
    spool.mkdir(parents=True)
    stale, recent = spool / "tmpstale000.pdf", spool / "tmprecent00.pdf"
    for leftover in (stale, recent):
        leftover.write_bytes(b"%PDF-1.7 left by a killed worker")
    two_hours_ago = time.time() - 7200
    os.utime(stale, (two_hours_ago, two_hours_ago))
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving").read_bytes()
    assert editor.post("/upload/", {"pdf": SimpleUploadedFile("sys.pdf", pdf)}).status_code == 302
    assert _spool(data_dir) == [recent]  # a copy that young may belong to an upload still running


def test_no_refusal_of_a_bad_upload_names_a_server_path_or_temp_file(tmp_path, data_dir, editor, settings) -> None:
    good = text_pdf(tmp_path / "good.pdf", SERVING_TEXT, title="Sys: fast serving").read_bytes()
    locked = pymupdf.open(stream=good)
    locked_bytes = locked.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    blank = pymupdf.open()
    blank.new_page()
    uploads = {"cut.pdf": good[:400], "locked.pdf": locked_bytes, "blank.pdf": blank.tobytes(),
               "garbage.pdf": b"%PDF-1.7\n" + bytes(range(256)) * 50}
    for name, content in uploads.items():
        response = editor.post("/upload/", {"pdf": SimpleUploadedFile(name, content)})
        body = response.content.decode()
        assert response.status_code == 400, name
        assert not _private_names(body, data_dir), (name, _private_names(body, data_dir))
        assert not _spool(data_dir), name
    assert not Paper.objects.exists()

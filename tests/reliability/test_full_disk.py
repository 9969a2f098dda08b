"""A full disk while storing a PDF: a recorded, actionable failure; nothing partial, nothing lost.

The data folder is a real 256 KiB tmpfs, so the write fails with the kernel's own ENOSPC.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from papers.models import Paper
from papers.services.pdfs import StorageError, download_paper_pdf, store_pdf
from tests.conftest import require


@pytest.fixture
def full_disk(tmp_path: Path, settings) -> Iterator[Path]:
    require(os.geteuid() == 0, "mounting a small tmpfs needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    require(result.returncode == 0, f"cannot mount a tmpfs here: {result.stderr.decode().strip()}")
    settings.DATA_DIR = mount
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_storing_a_pdf_on_a_full_disk_says_so_and_leaves_no_partial_file(full_disk: Path) -> None:
    with pytest.raises(StorageError, match="free disk space"):
        store_pdf(b"%PDF-1.7\n" + b"x" * 1024 * 1024)
    assert list((full_disk / "pdfs").iterdir()) == []


def test_ingesting_onto_a_full_disk_fails_with_a_message_and_changes_nothing(
    full_disk: Path, corpus_dir: Path, db
) -> None:
    with pytest.raises(CommandError, match="No space left on device"):
        call_command("ingest_pdf", str(corpus_dir / "pdfs" / "2309.06180.pdf"))
    assert not Paper.objects.exists()


def test_a_download_that_cannot_be_stored_is_recorded_on_the_paper(full_disk: Path, db, monkeypatch) -> None:
    paper = Paper.objects.create(arxiv_id="2309.06180", title="vLLM", pdf_url="https://arxiv.org/pdf/2309.06180")
    # The network edge (arXiv) is out of reach here: hand the pipeline a PDF-sized body as if downloaded.
    monkeypatch.setattr("papers.services.pdfs.fetch_pdf", lambda url, policy: b"%PDF-1.7\n" + b"x" * 1024 * 1024)
    assert download_paper_pdf(paper) is False
    paper.refresh_from_db()
    assert paper.status == Paper.Status.FAILED
    assert paper.failure_stage == "store"
    assert "No space left on device" in paper.failure_reason
    assert paper.events.filter(level="error", stage="store").exists()

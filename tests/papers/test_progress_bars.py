"""Long commands draw a progress bar on a terminal, and stay plain lines in pipes and logs."""
from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import sys
import termios

import pytest
from django.core.management import call_command

from papers.models import Paper
from tests.papers.pdfs import SERVING_TEXT, text_pdf


@pytest.fixture
def terminal():
    """A real pseudo-terminal: yields (its file, a function returning what was drawn on it). The test
    itself swaps it in as sys.stderr (pytest's capture resets sys.stderr after fixtures run)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    tty = os.fdopen(slave, "w")

    def drawn() -> str:
        tty.flush()
        os.set_blocking(master, False)
        chunks = []
        while True:
            try:
                chunks.append(os.read(master, 65536))
            except BlockingIOError:
                return b"".join(chunks).decode("utf-8", "replace")

    yield tty, drawn
    tty.close()
    os.close(master)


@pytest.mark.django_db
@pytest.mark.parametrize(("command", "label"), [(["score_papers"], "score"), (["reindex_search"], "reindex")])
def test_a_long_command_draws_a_bar_on_a_terminal(terminal, monkeypatch, command, label) -> None:
    tty, drawn = terminal
    monkeypatch.setattr(sys, "stderr", tty)
    for n in range(3):
        Paper.objects.create(arxiv_id=f"2401.0000{n}", title=f"Paper {n}", abstract="KV cache paging")
    call_command(*command, stdout=io.StringIO())
    bar = drawn()
    assert f"{label}: 100%" in bar and "3/3" in bar



@pytest.mark.django_db
def test_importing_a_folder_then_extracting_everything_draws_both_bars(terminal, monkeypatch, tmp_path,
                                                                        settings) -> None:
    settings.DATA_DIR = tmp_path / "data"
    (tmp_path / "papers").mkdir()
    for n in range(2):
        text_pdf(tmp_path / "papers" / f"2401.0002{n}.pdf", SERVING_TEXT.replace("Sys", f"Sys{n}"),
                 title=f"Sys{n}: fast serving")
    tty, drawn = terminal
    monkeypatch.setattr(sys, "stderr", tty)
    call_command("import_pdfs", str(tmp_path / "papers"), "--no-llm", stdout=io.StringIO())
    imported = drawn()
    assert "import: 100%" in imported and "2/2" in imported
    call_command("extract_papers", "--all", "--no-llm", stdout=io.StringIO())
    extracted = drawn()
    assert "extract: 100%" in extracted and "2/2" in extracted

@pytest.mark.django_db
def test_without_a_terminal_there_is_no_bar_only_lines(capsys) -> None:
    Paper.objects.create(arxiv_id="2401.00001", title="Paper", abstract="KV cache paging")
    call_command("reindex_search")
    captured = capsys.readouterr()
    assert "2401.00001: 0 facts" in captured.out and "%" not in captured.err

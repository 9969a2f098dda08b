"""`parse_bounded(path, limits)`: `parse_pdf` in a child process, under a page cap, an inflated-size
cap and a time limit; whatever the file does, the caller gets a ParsedPdf or a PdfError.

Why a child process, and not the Celery task's time limit: the upload form and `import_pdfs` parse in
the calling process (the paper is searchable before the page answers; no broker needed), and a parse
stuck inside MuPDF's C code cannot be interrupted from Python: only a process can be stopped; and
a child that runs out of memory or crashes takes no web worker with it. It is forked, not spawned: the child starts with pymupdf already imported (a spawned interpreter
takes seconds to import it), runs nothing but the parse, and leaves with os._exit, so the parent's
database connections and threads are never touched. Used by papers.services.pdfs (upload,
`import_pdfs`, `ingest_pdf`, the Celery parse task).
"""
from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from papers.pdf.model import ParsedPdf, PdfError
from papers.pdf.parser import parse_pdf

_DIED = "the PDF reader ran out of memory or crashed on this file; it may be damaged or far larger than a paper"


@dataclass(frozen=True)
class ParseLimits:
    max_pages: int
    max_inflated_bytes: int
    timeout_s: float


def _child(path: Path, limits: ParseLimits, out_fd: int) -> None:
    """Runs in the fork: cap CPU time, parse, write the pickled outcome, never return."""
    try:
        cpu = int(limits.timeout_s) + 2  # the kernel's own stop should the parent die before killing it
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        try:
            outcome: tuple[str, object] = ("ok", parse_pdf(path, max_pages=limits.max_pages,
                                                           max_inflated_bytes=limits.max_inflated_bytes))
        except PdfError as exc:
            outcome = ("error", exc.reason)
        except MemoryError:
            outcome = ("error", _DIED)
        except Exception as exc:  # a parser bug: the parent reports it (the process dies either way)
            outcome = ("bug", repr(exc)[:500])
        with os.fdopen(out_fd, "wb") as out:
            pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        os._exit(0)


def _read_all(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes until it closes the pipe; None when the deadline passes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        data = os.read(fd, 1 << 20)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def parse_bounded(path: str | Path, limits: ParseLimits) -> ParsedPdf:
    """Parse `path` in a child process under `limits`; PdfError (with a reason naming no path) for a bad
    file, a file over a cap, a parse past the time limit or a child that dies; RuntimeError for a bug."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines run in another process
        os.close(read_fd)
        _child(Path(path), limits, write_fd)
    os.close(write_fd)
    data: bytes | None = None
    try:
        data = _read_all(read_fd, time.monotonic() + limits.timeout_s)
    finally:
        os.close(read_fd)
        if data is None:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if data is None:
        raise PdfError(f"reading the PDF took longer than {limits.timeout_s:g} s (PDF_PARSE_TIMEOUT_S); "
                       "it may be damaged or far larger than a paper")
    if not data:
        raise PdfError(_DIED)  # the child died without a word (killed for memory, or a crash in C)
    try:
        kind, value = pickle.loads(data)  # noqa: S301 - written by our own child process just now
    except (pickle.UnpicklingError, EOFError, ValueError):
        raise PdfError(_DIED) from None  # it died halfway through writing
    if kind == "ok":
        return value
    if kind == "error":
        raise PdfError(value)
    raise RuntimeError(f"the PDF parser failed: {value}")

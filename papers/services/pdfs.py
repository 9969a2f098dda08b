"""PDF steps of the pipeline: download (safely), store by sha256 (the file is hashed once), parse
into pages, sections and tables, index for search (ontology.services.index_paper).

Called by the Celery tasks (download_pdf_task, parse_pdf_task), `ingest_pdf` and `import_pdfs`. Idempotent:
a PDF is stored once per sha256, and a paper already parsed from the same sha256 is not parsed
again (so nothing derived from its sections is thrown away by a re-run).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction

from ontology.services import index_paper
from papers import arxiv_ids
from papers.clients.download import DownloadError, DownloadPolicy, fetch_pdf
from papers.links import github_repos
from papers.models import Paper, PaperPage, PaperRepo, Section, Table
from papers.pdf import ParsedPdf, PdfError
from papers.pdf.bounded import ParseLimits, parse_bounded
from papers.services.arxiv import link_code
from papers.services.identity import Identity, identify, record_conflicts
from papers.services.lifecycle import advance_paper, fail_paper, fill_paper

_PARSED_OR_LATER = {Paper.Status.PARSED, Paper.Status.EXTRACTING, Paper.Status.WAITING, Paper.Status.EXTRACTED}


def pdf_dir() -> Path:
    path = Path(settings.DATA_DIR) / "pdfs"
    path.mkdir(parents=True, exist_ok=True)
    return path


class StorageError(Exception):
    """The PDF could not be written (disk full, permissions); nothing partial is left behind."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def store_pdf(content: bytes, sha: str | None = None) -> tuple[str, Path]:
    """Write `content` under DATA_DIR/pdfs/<sha256>.pdf (atomically, once); returns (sha256, path).
    `sha` is the content's sha256 when the caller has computed it already (the file is hashed once)."""
    sha = sha or hashlib.sha256(content).hexdigest()
    target = pdf_dir() / f"{sha}.pdf"
    if target.exists():
        return sha, target
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk can surface only here
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StorageError(  # no path: the reason reaches uploaders; operators know INFRAWIKI_DATA_DIR
            f"could not store the {len(content):,}-byte PDF in the data folder: {exc.strerror or exc}; "
            "free disk space there (or set INFRAWIKI_DATA_DIR) and run the step again") from exc
    return sha, target


def parse_limits() -> ParseLimits:
    """The bounds every stored PDF is read under (settings PDF_MAX_PAGES and the others)."""
    return ParseLimits(max_pages=settings.PDF_MAX_PAGES, max_inflated_bytes=settings.PDF_MAX_INFLATED_BYTES,
                       timeout_s=settings.PDF_PARSE_TIMEOUT_S)


def download_policy() -> DownloadPolicy:
    return DownloadPolicy(
        allowed_hosts=list(settings.DOWNLOAD_ALLOWED_HOSTS), max_bytes=settings.PDF_MAX_BYTES,
        timeout_s=settings.DOWNLOAD_TIMEOUT_S, allow_loopback=settings.DOWNLOAD_ALLOW_LOOPBACK,
    )


def download_paper_pdf(paper: Paper) -> bool:
    """Fetch the paper's PDF. True when a PDF is stored (now or already); False on a permanent failure
    (recorded on the paper). Transient DownloadErrors propagate so the task can retry them."""
    if paper.status in _PARSED_OR_LATER and paper.pdf_sha256:
        return True  # this version is done (a newer version resets the status to "new")
    if not paper.pdf_url:
        fail_paper(paper, "download", "the paper has no PDF link; add pdf_url or ingest a PDF file")
        return False
    try:
        content = fetch_pdf(paper.pdf_url, download_policy())
    except DownloadError as exc:
        if not exc.permanent:
            raise
        fail_paper(paper, "download", exc.reason)
        return False
    try:
        sha, path = store_pdf(content)
    except StorageError as exc:
        fail_paper(paper, "store", exc.reason)
        return False
    advance_paper(paper, Paper.Status.DOWNLOADED, "download", f"stored {len(content):,} bytes, sha256 {sha[:12]}",
                  pdf_sha256=sha, pdf_path=str(path))
    return True


def save_parsed(paper: Paper, parsed: ParsedPdf, sha: str, path: Path) -> None:
    """Replace the paper's pages, sections and tables with `parsed` and mark it parsed, in one
    transaction. Its search entries are the caller's step (built once: at once when nothing else
    follows, after extraction when that comes next)."""
    with transaction.atomic():
        PaperPage.objects.filter(paper=paper).delete()
        Section.objects.filter(paper=paper).delete()
        Table.objects.filter(paper=paper).delete()
        PaperPage.objects.bulk_create([
            PaperPage(paper=paper, number=number, text=text) for number, text in enumerate(parsed.page_texts, start=1)
        ])
        Section.objects.bulk_create([
            Section(paper=paper, order=i, number=s.number[:20], title=s.title, page_start=s.page_start,
                    page_end=s.page_end, text=s.text)
            for i, s in enumerate(parsed.sections)
        ])
        Table.objects.bulk_create([
            Table(paper=paper, order=i, page=t.page, caption=t.caption, n_rows=t.n_rows, n_cols=t.n_cols, cells=t.cells)
            for i, t in enumerate(parsed.tables)
        ])
        extra = {"abstract": parsed.abstract} if parsed.abstract and not paper.abstract else {}
        # Version 0 is a seed entry whose title came from a curated list; the PDF itself says better.
        if parsed.title and (paper.version == 0 or not paper.title or paper.title.startswith("(untitled")):
            extra["title"] = parsed.title
        advance_paper(paper, Paper.Status.PARSED, "parse",
                      f"{len(parsed.sections)} sections, {len(parsed.tables)} tables, {parsed.page_count} pages",
                      pdf_sha256=sha, pdf_path=str(path), page_count=parsed.page_count,
                      environment=parsed.environment, **extra)
        link_code(paper, github_repos(parsed.abstract), PaperRepo.Source.PDF)


def parse_paper_pdf(paper: Paper) -> ParsedPdf | None:
    """Parse the stored PDF of `paper` and index it for search in the same transaction (searchable the
    moment it is stored); None on a permanent failure (recorded on the paper)."""
    path = Path(paper.pdf_path)
    if not paper.pdf_path or not path.exists():
        fail_paper(paper, "parse", f"the stored PDF {paper.pdf_path or '(none)'} is missing; download it again")
        return None
    try:
        parsed = parse_bounded(path, parse_limits())
    except PdfError as exc:
        fail_paper(paper, "parse", exc.reason)
        return None
    with transaction.atomic():
        save_parsed(paper, parsed, paper.pdf_sha256 or hashlib.sha256(path.read_bytes()).hexdigest(), path)
        index_paper(paper)
    return parsed


@dataclass
class Ingested:
    """What `ingest_pdf` did: the paper, the parse (None when this PDF was stored before), timings."""

    paper: Paper
    parsed: ParsedPdf | None
    parse_s: float = 0.0
    identity: Identity | None = None


def ingest_pdf(path: str | Path, arxiv_id: str | None = None) -> Paper:
    """Parse and store a local PDF (the `ingest_pdf` command); see `ingest_pdf_file`."""
    ingested = ingest_pdf_file(path, arxiv_id)
    ingested.paper.parse_s = ingested.parse_s
    return ingested.paper


def _lock_identities() -> None:
    """Serialise deciding and storing a PDF's identity (until the transaction ends): two uploads of the
    same file, or two PDFs naming the same id, would otherwise both create the paper."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('papers_identity'))")


def _stored_as(sha: str, arxiv_id: str | None, any_status: bool) -> Paper | None:
    existing = Paper.objects.filter(pdf_sha256=sha)
    if not any_status:
        existing = existing.filter(status__in=_PARSED_OR_LATER)
    if arxiv_id:
        existing = existing.filter(arxiv_id=arxiv_id)
    return existing.first()


def ingest_pdf_file(path: str | Path, arxiv_id: str | None = None, file_name: str | None = None,
                    index: bool = True, skip_stored: bool = False) -> Ingested:
    """Parse (papers.pdf.bounded: capped and time-limited) and store a local PDF as the paper it is
    (papers.services.identity decides which), indexed for search in the same transaction unless
    `index` is False (the caller extracts next, and ontology.services.ingest_document indexes it once).
    The same bytes stored before are not ingested again: already parsed, or with `skip_stored` held by
    any paper at all (`import_pdfs` skips those as duplicates).

    Raises PdfError for a bad file and arxiv_ids.ArxivIdError for a bad `arxiv_id`; then nothing stored changes
    and no file is left behind. The same file ingested twice, even at the same moment, is parsed into
    one paper: the second gets `Ingested(paper, parsed=None)`.
    """
    path = Path(path)
    arxiv_id = arxiv_ids.normalise(arxiv_id) if arxiv_id else None
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise PdfError(f"the file cannot be read: {exc.strerror or exc}") from exc
    sha = hashlib.sha256(content).hexdigest()
    existing = _stored_as(sha, arxiv_id, skip_stored)
    if existing is not None:
        return Ingested(existing, None)
    started = time.perf_counter()
    parsed = parse_bounded(path, parse_limits())
    parse_s = time.perf_counter() - started
    file_existed = (pdf_dir() / f"{sha}.pdf").exists()
    _, stored = store_pdf(content, sha)
    try:
        with transaction.atomic():
            _lock_identities()
            existing = _stored_as(sha, arxiv_id, skip_stored)
            if existing is not None:  # stored by a concurrent call while this one parsed
                return Ingested(existing, None)
            identity = identify(parsed, sha, file_name or path.name, arxiv_id)
            # The stamp's version travels with the PDF, also onto a held copy (taken over if accepted).
            version = parsed.arxiv_version or 0
            paper = identity.paper or fill_paper(identity.new_key, version=version,
                                                 values={"title": parsed.title or "(untitled PDF)"})[0]
            save_parsed(paper, parsed, sha, stored)
            if index:
                index_paper(paper)
            if version > paper.version and identity.source == "stamp":
                Paper.objects.filter(pk=paper.pk).update(version=version)
                paper.version = version
            record_conflicts(paper, identity, sha)
    except BaseException:
        if not file_existed and not Paper.objects.filter(pdf_sha256=sha).exists():
            stored.unlink(missing_ok=True)  # nothing refers to the file: leave no orphan behind
        raise
    return Ingested(paper, parsed, parse_s, identity)

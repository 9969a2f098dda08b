"""Bringing one's own papers: a person's PDFs (files or folders) stored, extracted and searchable.

Used by `import_pdfs` and the upload form. Each PDF goes through the same steps as the pipeline:
identity (papers.services.identity: stamp, DOI, title), one bounded parse stored as pages, sections
and tables, then that parse handed to the ontology once (ontology.services.ingest_document: extract,
store, index). A file already stored (same sha256) is skipped; a bad file is reported with its reason
and the others carry on.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from celery import current_app
from kombu.exceptions import OperationalError as BrokerUnavailable

from ontology.services import FactExtractor, LlmUnavailable, default_llm_extractor
from papers.pdf import PdfError
from papers.services.extraction import ExtractionFailed, extract_paper
from papers.services.pdfs import StorageError, ingest_pdf_file


@dataclass
class Imported:
    """The outcome for one file: `status` is "stored", "duplicate" or "failed"."""

    path: Path
    status: str
    arxiv_id: str = ""
    paper_id: int | None = None
    facts: int = 0
    reason: str = ""

    def line(self) -> str:
        if self.status == "failed":
            return f"{self.path}: failed — {self.reason}"
        if self.status == "duplicate":
            return f"{self.path}: already stored as {self.arxiv_id}, skipped"
        return f"{self.path}: stored as {self.arxiv_id}, {self.facts} facts" + (f" ({self.reason})" if self.reason else "")


def pdf_files(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """(files to import, paths that do not exist): a folder yields its *.pdf files, recursively, in
    name order; a file named directly is taken whatever its name (the parse says if it is no PDF)."""
    files: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf"))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(path)
    unique = list(dict.fromkeys(p.resolve() for p in files))
    return unique, missing


def available_llm() -> FactExtractor | None:
    """The LLM extractor when its server answers, else None (rules alone)."""
    try:
        return default_llm_extractor()
    except LlmUnavailable:
        return None


def import_pdf(path: Path, llm: FactExtractor | None, file_name: str | None = None,
               extract: bool = True) -> Imported:
    """Store and (unless `extract` is False: the caller queues it) extract one PDF; never raises for a
    bad file (the outcome says what happened). `file_name` is the name a person gave the file."""
    try:
        ingested = ingest_pdf_file(path, file_name=file_name, index=not extract, skip_stored=True)
    except (PdfError, StorageError) as exc:
        return Imported(path, "failed", reason=exc.reason)
    paper = ingested.paper
    if ingested.parsed is None:  # these bytes are stored already (before, or by another upload meanwhile)
        return Imported(path, "duplicate", paper.arxiv_id, paper.pk)
    note = f"conflict: {ingested.identity.note()}" if ingested.identity and ingested.identity.held else ""
    if not extract:
        return Imported(path, "stored", paper.arxiv_id, paper.pk, reason=note)
    try:
        try:
            run = extract_paper(paper.pk, llm=llm, use_llm=False, document=ingested.parsed, index=True)
        except LlmUnavailable:
            run = extract_paper(paper.pk, use_llm=False, document=ingested.parsed, index=True)
            note = "; ".join(filter(None, [note, "LLM server went away, rule extractors only"]))
    except ExtractionFailed as exc:
        return Imported(path, "failed", paper.arxiv_id, paper.pk, reason=f"stored, but extraction failed: {exc}")
    return Imported(path, "stored", paper.arxiv_id, paper.pk, run.facts_created + run.facts_updated + run.facts_kept,
                    note)


EXTRACT_TASK = "papers.tasks.extract_paper_task"


def queue_extraction(paper_id: int) -> bool:
    """Queue the stored paper's extraction (the upload form, an accepted held PDF); False when the
    broker cannot be reached. The task is sent by name (papers.tasks imports these services, so they
    cannot import it back), and by name it needs no registry: a web process never imports
    papers.tasks, so looking it up in the app's task registry there fails. The name routes it to the
    extract queue (infrawiki/celery.py)."""
    try:
        current_app.send_task(EXTRACT_TASK, args=[paper_id])
    except BrokerUnavailable:
        return False
    return True

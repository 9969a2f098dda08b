"""Extracting the facts of a stored paper: its stored pages, outline and tables handed to the
ontology's pure `document -> facts` step, then stored, indexed and recorded.

Runs in a Celery worker (queue `extract`, papers.tasks.extract_paper_task) after a parse, and from
`extract_papers` and `import_pdfs`. Reads the pages stored by the parse, so the PDF is not opened
again; a paper parsed before pages were stored is parsed once more first. Paper status moves
extracting -> extracted; to waiting when the LLM server cannot be reached (the task retries with
backoff); to failed, with a reason a person can act on, when there is no PDF or no text.
"""
from __future__ import annotations

import time
from pathlib import Path

from ontology.extraction.llm import LlmUnavailable, default_llm_extractor
from ontology.extraction.pipeline import FactExtractor, extract_document
from ontology.extraction.text import DocSection, DocTable, PdfDocument
from ontology.models import ExtractionRun
from ontology.search_index import index_facts, index_paper
from ontology.selectors import facts_for_paper
from ontology.services import finish_run, record_rejected_outputs, start_run, store_facts
from papers.models import Paper
from papers.services.events import advance_paper, fail_paper, record_event
from papers.services.pdfs import parse_paper_pdf

STAGE = "extract"


class ExtractionFailed(RuntimeError):
    """A permanent failure (no PDF, no text layer): retrying will not help."""


def stored_document(paper: Paper) -> PdfDocument:
    """The extraction input from what the parse stored: pages, outline, tables, title, abstract."""
    return PdfDocument(
        page_texts=list(paper.pages.order_by("number").values_list("text", flat=True)),
        title=paper.title,
        abstract=paper.abstract,
        arxiv_id=None if paper.arxiv_id.startswith("sha256:") else paper.arxiv_id,
        sections=[DocSection(s.title, s.page_start, s.page_end) for s in paper.sections.order_by("order")],
        tables=[DocTable(t.page, t.caption, t.cells) for t in paper.tables.order_by("order")],
    )


def _parsed_pages(paper: Paper) -> None:
    """Make sure the paper's pages are stored (parsing its PDF once if not); ExtractionFailed if impossible."""
    if paper.pages.exists():
        return
    if not paper.pdf_path or not Path(paper.pdf_path).is_file():
        raise ExtractionFailed(f"no PDF stored for {paper.arxiv_id} (pdf_path={paper.pdf_path!r}); ingest it again")
    if parse_paper_pdf(paper) is None:
        raise ExtractionFailed(paper.failure_reason)


def _mark(paper: Paper, status: str, reason: str = "") -> None:
    Paper.objects.filter(pk=paper.pk).update(status=status, failure_stage=STAGE if reason else "",
                                             failure_reason=reason)
    paper.status, paper.failure_stage, paper.failure_reason = status, STAGE if reason else "", reason


def extract_paper(paper_id: int, llm: FactExtractor | None = None, use_llm: bool = True) -> ExtractionRun:
    """Run the extractors on the paper's stored pages and store the facts; returns the run record.

    Raises LlmUnavailable (paper left `waiting`) and ExtractionFailed (paper left `failed`).
    """
    paper = Paper.objects.get(pk=paper_id)
    started = time.perf_counter()
    run = start_run(paper)
    try:
        _parsed_pages(paper)
        _mark(paper, Paper.Status.EXTRACTING)
        if use_llm and llm is None:
            llm = default_llm_extractor()
        result = extract_document(stored_document(paper), llm=llm)
    except LlmUnavailable as exc:
        finish_run(run, ExtractionRun.Status.WAITING, started, error=str(exc))
        _mark(paper, Paper.Status.WAITING, f"waiting for the LLM server: {exc}")
        record_event(stage=STAGE, message=f"LLM server unreachable, will retry: {exc}", paper=paper, error=True)
        raise
    except ExtractionFailed as exc:
        finish_run(run, ExtractionRun.Status.FAILED, started, error=str(exc))
        fail_paper(paper, STAGE, str(exc))
        raise
    counts = store_facts(paper, result.facts)
    rejected = record_rejected_outputs(paper, result.rejected)
    index_facts(list(facts_for_paper(paper.id).filter(document__isnull=True)))
    index_paper(paper)
    finish_run(run, ExtractionRun.Status.DONE, started, stats=result.stats, counts=counts, rejected=rejected)
    advance_paper(paper, Paper.Status.EXTRACTED, STAGE,
                  f"{len(result.facts)} facts ({counts['created']} new, {counts['updated']} updated, "
                  f"{counts['kept']} reviewed kept, {rejected} model outputs rejected)")
    return run

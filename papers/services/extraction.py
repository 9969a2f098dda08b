"""Extracting the facts of a stored paper: the paper's status around the ontology's one write entry
point for a document (ontology.services.ingest_document: extract, store, index, record the run).

Runs in a Celery worker (queue `extract`, papers.tasks.extract_paper_task) after a parse, and from
`extract_papers` and `import_pdfs`. The document is the parse itself when the caller has it in hand
(`import_pdfs`), else the one rebuilt from what the parse stored (`stored_document`), so the PDF is not
opened again; a paper parsed before pages were stored is parsed once more first. Paper status moves
extracting -> extracted; to waiting when the LLM server cannot be reached (the task retries with
backoff); to failed, with a reason a person can act on, when there is no PDF or no text.
"""
from __future__ import annotations

import re
from pathlib import Path

from ontology.services import FactExtractor, LlmUnavailable, ingest_document
from papers.events import record_event
from papers.models import Paper
from papers.pdf import Caption, ParsedPdf, ParsedSection, ParsedTable
from papers.services.lifecycle import advance_paper, fail_paper, mark_paper
from papers.services.pdfs import parse_paper_pdf

STAGE = "extract"
_TABLE_LABEL = re.compile(r"(?:Table|TABLE|Tab\.)\s*[A-Z]?\d+")


class ExtractionFailed(RuntimeError):
    """A permanent failure (no PDF, no text layer): retrying will not help."""


def _label(caption: str) -> str:
    """"Table 3" of "Table 3: Latency ..." ("" when the caption does not start with its label)."""
    match = _TABLE_LABEL.match(caption)
    return match.group(0) if match else ""


def stored_document(paper: Paper) -> ParsedPdf:
    """The parse as stored: pages, outline, tables, title, abstract (figure captions are not stored;
    a table's caption comes with its table)."""
    tables = [ParsedTable(t.page, t.caption, t.n_rows, t.n_cols, t.cells) for t in paper.tables.order_by("order")]
    return ParsedPdf(
        title=paper.title, abstract=paper.abstract,
        sections=[ParsedSection(s.title, s.number, s.number.count(".") + 1, s.page_start, s.page_end, s.text)
                  for s in paper.sections.order_by("order")],
        tables=tables,
        captions=[Caption("table", _label(t.caption), t.page, t.caption) for t in tables if t.caption],
        environment=dict(paper.environment or {}),
        page_texts=list(paper.pages.order_by("number").values_list("text", flat=True)),
        page_count=paper.page_count or 0,
        arxiv_id=None if paper.arxiv_id.startswith("sha256:") else paper.arxiv_id,
        doi=paper.doi or None,
    )


def _read_stored(paper: Paper) -> ParsedPdf:
    """The stored document, parsing the paper's PDF once first if its pages were never stored;
    ExtractionFailed (the paper marked failed) when that is impossible."""
    if not paper.pages.exists():
        if not paper.pdf_path or not Path(paper.pdf_path).is_file():
            raise ExtractionFailed(f"no PDF stored for {paper.arxiv_id} (pdf_path={paper.pdf_path!r}); ingest it again")
        if parse_paper_pdf(paper) is None:
            raise ExtractionFailed(paper.failure_reason)
    return stored_document(paper)


def extract_paper(paper_id: int, llm: FactExtractor | None = None, use_llm: bool = True,
                  document: ParsedPdf | None = None, index: bool = False):
    """Run the extractors on the paper's document (`document`, or its stored parse) and store the
    facts; returns the ontology's run record. `index` builds the paper's search entries too (for a
    parse that was stored without them, as `import_pdfs` does: they are built once, after extraction).

    Raises LlmUnavailable (paper left `waiting`) and ExtractionFailed (paper left `failed`).
    """
    paper = Paper.objects.get(pk=paper_id)

    def read() -> ParsedPdf:
        parsed = document if document is not None else _read_stored(paper)
        mark_paper(paper, Paper.Status.EXTRACTING)
        return parsed

    try:
        run = ingest_document(paper, read, llm=llm, use_llm=use_llm and llm is None, index=index)
    except LlmUnavailable as exc:
        mark_paper(paper, Paper.Status.WAITING, STAGE, f"waiting for the LLM server: {exc}")
        record_event(stage=STAGE, message=f"LLM server unreachable, will retry: {exc}", paper=paper, error=True)
        raise
    except ExtractionFailed as exc:
        fail_paper(paper, STAGE, str(exc))
        raise
    advance_paper(paper, Paper.Status.EXTRACTED, STAGE,
                  f"{run.facts_created} new, {run.facts_updated} updated, {run.facts_kept} reviewed kept, "
                  f"{run.rejected_outputs} model outputs rejected")
    return run

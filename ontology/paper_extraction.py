"""Extract, store and index the facts of one stored paper: the work behind extract_paper_task.

Runs in a Celery worker (queue `extract`) after the paper's PDF is parsed. Paper status moves
extracting -> extracted; to waiting when the LLM server cannot be reached (the task retries with
backoff); to failed, with a reason a person can act on, when the PDF is missing or has no text.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from django.apps import apps

from ontology.extraction.llm import LlmUnavailable, default_llm_extractor
from ontology.extraction.pipeline import TradeOffExtractor, extract_document
from ontology.extraction.text import NoTextLayerError, load_pdf
from ontology.models import ExtractionRun
from ontology.search_index import index_facts, index_paper
from ontology.services import finish_run, record_rejected_outputs, start_run, store_facts

log = logging.getLogger(__name__)
STAGE = "extract"


class ExtractionFailed(RuntimeError):
    """A permanent failure (no PDF, no text layer): retrying will not help."""


def _set_status(paper, status: str, reason: str = "") -> None:
    paper.status = status
    paper.failure_stage = STAGE if reason else ""
    paper.failure_reason = reason
    paper.save(update_fields=["status", "failure_stage", "failure_reason", "updated_at"])


def _event(paper, message: str, error: bool = False) -> None:
    event_model = apps.get_model("papers", "PipelineEvent")
    event_model.objects.create(paper=paper, stage=STAGE, level="error" if error else "info", message=message[:2000])


def extract_paper(paper_id: int, llm: TradeOffExtractor | None = None, use_llm: bool = True) -> ExtractionRun:
    """Run the extractors on the paper's PDF and store the facts; returns the run record.

    Raises LlmUnavailable (paper left `waiting`) and ExtractionFailed (paper left `failed`).
    """
    paper = apps.get_model("papers", "Paper").objects.get(pk=paper_id)
    started = time.perf_counter()
    _set_status(paper, "extracting")
    run = start_run(paper)
    try:
        if not paper.pdf_path or not Path(paper.pdf_path).is_file():
            raise ExtractionFailed(f"no PDF stored for {paper.arxiv_id} (pdf_path={paper.pdf_path!r}); ingest it again")
        document = load_pdf(paper.pdf_path)
        document.title, document.abstract = paper.title or document.title, paper.abstract or document.abstract
        if use_llm and llm is None:
            llm = default_llm_extractor()
        result = extract_document(document, llm=llm)
    except LlmUnavailable as exc:
        finish_run(run, ExtractionRun.Status.WAITING, started, error=str(exc))
        _set_status(paper, "waiting", f"waiting for the LLM server: {exc}")
        _event(paper, f"LLM server unreachable, will retry: {exc}", error=True)
        raise
    except (ExtractionFailed, NoTextLayerError) as exc:
        finish_run(run, ExtractionRun.Status.FAILED, started, error=str(exc))
        _set_status(paper, "failed", str(exc))
        _event(paper, str(exc), error=True)
        raise ExtractionFailed(str(exc)) from exc
    counts = store_facts(paper, result.facts)
    rejected = record_rejected_outputs(paper, result.rejected)
    index_facts(list(paper.facts.filter(document__isnull=True).exclude(status="rejected")))
    index_paper(paper)
    finish_run(run, ExtractionRun.Status.DONE, started, stats=result.stats, counts=counts, rejected=rejected)
    _set_status(paper, "extracted")
    _event(paper, f"{len(result.facts)} facts ({counts['created']} new, {counts['updated']} updated, "
                  f"{counts['kept']} reviewed kept, {rejected} model outputs rejected)")
    return run

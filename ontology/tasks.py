"""Celery tasks of the ontology app (queue `extract`): thin wrappers around ontology services.

`extract_paper_task` is sent by name by papers.tasks.parse_pdf_task after a parse; on success it
sends "papers.tasks.score_paper_task" by name (no import of the papers app's tasks).
"""
from __future__ import annotations

from celery import current_app, shared_task

from ontology.extraction.llm import LlmUnavailable
from ontology.paper_extraction import ExtractionFailed, extract_paper


@shared_task(
    bind=True,
    name="ontology.tasks.extract_paper_task",
    autoretry_for=(LlmUnavailable,),
    retry_backoff=30,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=48,
    acks_late=True,
)
def extract_paper_task(self, paper_id: int) -> dict:
    """Extract facts of one paper; LLM unreachable -> retried with backoff (paper shows `waiting`)."""
    try:
        run = extract_paper(paper_id)
    except ExtractionFailed as exc:
        return {"paper_id": paper_id, "status": "failed", "error": str(exc)}
    current_app.send_task("papers.tasks.score_paper_task", args=[paper_id])
    return {"paper_id": paper_id, "status": run.status, "facts_created": run.facts_created,
            "facts_updated": run.facts_updated, "facts_kept": run.facts_kept}

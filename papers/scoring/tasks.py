"""Celery tasks "papers.tasks.score_paper_task" (one paper, sent by the ontology after extraction) and
"papers.tasks.score_all_task" (nightly beat: time-dependent judgements such as "recent commits" and
"too fresh" change without any input changing).

Registered under the papers.tasks name (papers/tasks.py imports this module, which Celery
autodiscovers), so senders need no import. Thin: load by id, call the service.
"""
from __future__ import annotations

import logging

from celery import shared_task

from papers.models import Paper
from papers.scoring.services import score_all, score_paper

log = logging.getLogger(__name__)


@shared_task(name="papers.tasks.score_paper_task", autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=5)
def score_paper_task(paper_id: int) -> dict:
    """Idempotent: an unchanged paper keeps its latest Score row."""
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        log.warning("score_paper_task: paper %s no longer exists", paper_id)
        return {"paper_id": paper_id, "error": "paper not found"}
    score, changed = score_paper(paper)
    return {"paper": paper.arxiv_id, "total": score.total, "tier": score.tier, "changed": changed}


@shared_task(name="papers.tasks.score_all_task")
def score_all_task() -> dict:
    """Rescore every paper; only papers whose inputs or time-dependent judgements changed get a row."""
    return score_all()

"""Stores scorecards: a new Score row only when a paper's scoring inputs changed.

Runs from the Celery task "papers.tasks.score_paper_task" (sent by the ontology after extraction)
and from `manage.py score_papers`. Concurrent scorings of one paper are serialised by a row lock
on the paper, so the "one latest score per paper" constraint never trips.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from papers.events import record_event
from papers.models import Paper, Score
from papers.scoring.rules import Scorecard, ScoringConfig, score
from papers.scoring.selectors import scoring_input

log = logging.getLogger(__name__)


def scoring_config() -> ScoringConfig:
    return ScoringConfig(
        recent_commit_days=settings.SCORING_RECENT_COMMIT_DAYS, too_fresh_days=settings.SCORING_TOO_FRESH_DAYS
    )


def card_fields(card: Scorecard, now: datetime) -> dict[str, Any]:
    """A scorecard as Score column values (also what knowledge files carry as a paper's score)."""
    subs = card.subscores
    return {
        "total": card.total, "tier": card.tier,
        "code_availability": subs["code_availability"].value,
        "experimental_realism": subs["experimental_realism"].value,
        "parameter_transparency": subs["parameter_transparency"].value,
        "community_feedback": subs["community_feedback"].value,
        "evidence": card.evidence(), "screening": {q: vars(a) for q, a in card.screening.items()},
        "production_value": card.production_value, "implementation_cost": card.implementation_cost,
        "quadrant": card.quadrant, "value_matrix": card.value_matrix, "flags": card.flags, "topics": card.topics,
        "fingerprint": card.fingerprint, "scored_at": now,
    }


@transaction.atomic
def score_paper(paper: Paper, now: datetime | None = None, facts: Iterable[Any] | None = None) -> tuple[Score, bool]:
    """Score `paper` at `now`; returns (latest score, whether a new row was written)."""
    now = now or timezone.now()
    Paper.objects.select_for_update().filter(pk=paper.pk).first()
    latest = Score.objects.filter(paper=paper, is_latest=True).first()
    if latest and latest.source == Score.Source.IMPORTED and not paper.pdf_path:
        return latest, False  # computed elsewhere from the PDF; without it here a rescore would know less
    card = score(scoring_input(paper, facts), now, scoring_config())
    if latest and latest.fingerprint == card.fingerprint:
        return latest, False
    if latest:
        Score.objects.filter(pk=latest.pk).update(is_latest=False)
    row = Score.objects.create(paper=paper, is_latest=True, **card_fields(card, now))
    record_event(stage="score", paper=paper, message=f"scored {row.total:g}/10 ({row.get_tier_display()})")
    return row, True


@transaction.atomic
def store_imported_score(paper: Paper, fields: dict[str, Any]) -> bool:
    """Make a scorecard from a knowledge file the paper's latest, unless this instance scored the
    paper from its own copy of the PDF. True when a row was written (False: the same card is there)."""
    Paper.objects.select_for_update().filter(pk=paper.pk).first()
    latest = Score.objects.filter(paper=paper, is_latest=True).first()
    if paper.pdf_path and latest and latest.source == Score.Source.COMPUTED:
        return False
    if latest and latest.source == Score.Source.IMPORTED and latest.fingerprint == fields["fingerprint"]:
        return False
    if latest:
        Score.objects.filter(pk=latest.pk).update(is_latest=False)
    Score.objects.create(paper=paper, is_latest=True, source=Score.Source.IMPORTED, **fields)
    return True


def score_all(now: datetime | None = None, papers: Iterable[Paper] | None = None) -> dict[str, int]:
    """Rescore `papers` (every paper by default; a command passes them under a progress bar); one
    paper's failure is recorded and does not stop the others."""
    counts = {"changed": 0, "unchanged": 0, "failed": 0}
    for paper in Paper.objects.order_by("id").iterator() if papers is None else papers:
        try:
            _, changed = score_paper(paper, now)
        except Exception as exc:  # recorded per paper so one bad row never blocks the rest
            log.exception("scoring %s failed", paper.arxiv_id)
            record_event(stage="score", paper=paper, message=f"scoring failed: {exc}", error=True)
            counts["failed"] += 1
            continue
        counts["changed" if changed else "unchanged"] += 1
    return counts

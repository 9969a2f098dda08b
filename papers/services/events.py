"""Recording pipeline outcomes: one PipelineEvent per step result, and a failure reason on the
paper or repo that a person can act on. Every service that can fail writes through here.
"""
from __future__ import annotations

from papers.models import CodeRepo, Paper, PipelineEvent


def record_event(*, stage: str, message: str, paper: Paper | None = None, repo: CodeRepo | None = None,
                 error: bool = False) -> PipelineEvent:
    level = PipelineEvent.Level.ERROR if error else PipelineEvent.Level.INFO
    return PipelineEvent.objects.create(paper=paper, repo=repo, stage=stage, level=level, message=message)


def fail_paper(paper: Paper, stage: str, reason: str) -> None:
    """Mark a permanent failure: status, stage and reason on the paper, plus an error event.

    Stored data (metadata, an earlier PDF and its sections) is left as it is.
    """
    Paper.objects.filter(pk=paper.pk).update(status=Paper.Status.FAILED, failure_stage=stage, failure_reason=reason)
    paper.status, paper.failure_stage, paper.failure_reason = Paper.Status.FAILED, stage, reason
    record_event(stage=stage, message=reason, paper=paper, error=True)


def advance_paper(paper: Paper, status: str, stage: str, message: str, **fields) -> None:
    """Move a paper to `status` after a successful step, clearing any earlier failure."""
    updates = {"status": status, "failure_stage": "", "failure_reason": "", **fields}
    Paper.objects.filter(pk=paper.pk).update(**updates)
    # Read back what was stored: the clean fields rewrite text PostgreSQL refuses (papers.cleaning), and
    # whatever uses `paper` next (the search index) must see the stored text, not the raw input.
    paper.refresh_from_db(fields=list(updates))
    record_event(stage=stage, message=message, paper=paper)

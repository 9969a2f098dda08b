"""Recording pipeline outcomes: one PipelineEvent per step result. Every service that can fail
records here (the paper's status itself: papers.services.lifecycle).
"""
from __future__ import annotations

from papers.models import CodeRepo, Paper, PipelineEvent


def record_event(*, stage: str, message: str, paper: Paper | None = None, repo: CodeRepo | None = None,
                 error: bool = False) -> PipelineEvent:
    level = PipelineEvent.Level.ERROR if error else PipelineEvent.Level.INFO
    return PipelineEvent.objects.create(paper=paper, repo=repo, stage=stage, level=level, message=message)

"""Celery tasks of the papers app (autodiscovered as `papers.tasks`).

The scoring and digest tasks live beside their services and are imported here so the worker
registers them under their contract names "papers.tasks.score_paper_task" and
"papers.tasks.send_digests_task".
"""
from papers.digest.tasks import send_digests_task
from papers.scoring.tasks import score_paper_task

__all__ = ["score_paper_task", "send_digests_task"]

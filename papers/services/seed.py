"""Loading the bundled seed list (papers/seed/papers.json) so a fresh install has real papers offline.

Runs on every `make run` (bootstrap) and from `load_seed`; idempotent: existing papers keep every
field they have (a crawl or a person may have filled them), only empty ones are filled in. Papers
created or filled in are indexed for search at once, so their titles and abstracts answer queries
from the first run (no separate reindex step).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from ontology.services import index_paper
from papers.links import github_repos
from papers.models import Paper, PaperRepo
from papers.services.arxiv import link_code
from papers.services.lifecycle import fill_paper

SEED_FILE = Path(__file__).resolve().parent.parent / "seed" / "papers.json"


@dataclass
class SeedReport:
    created: int = 0
    filled: int = 0
    unchanged: int = 0


def load_seed(path: Path = SEED_FILE) -> SeedReport:
    """Create missing seed papers (version 0 = "version not known yet") and link their code."""
    entries = json.loads(path.read_text(encoding="utf-8"))["papers"]
    report = SeedReport()
    changed: list[Paper] = []
    with transaction.atomic():
        for entry in entries:
            code = github_repos(entry.get("code_url") or "")
            paper, created, filled = fill_paper(entry["arxiv_id"], version=0, values={
                "title": entry["title"], "abstract": entry.get("abstract") or "",
                "pdf_url": f"https://arxiv.org/pdf/{entry['arxiv_id']}",
                "code_urls": [f"https://github.com/{name}" for name in code],
            })
            if created:
                report.created += 1
            elif filled:
                report.filled += 1
            else:
                report.unchanged += 1
            if filled:
                changed.append(paper)
            link_code(paper, code, PaperRepo.Source.SEED)
        for paper in changed:
            index_paper(paper)
    return report

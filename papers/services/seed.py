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

from ontology.search_index import index_paper
from papers.links import github_repos
from papers.models import Paper, PaperRepo
from papers.services.arxiv import link_code

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
        existing = {p.arxiv_id: p for p in Paper.objects.filter(arxiv_id__in=[e["arxiv_id"] for e in entries])}
        for entry in entries:
            paper = existing.get(entry["arxiv_id"])
            code = github_repos(entry.get("code_url") or "")
            if paper is None:
                paper = Paper.objects.create(
                    arxiv_id=entry["arxiv_id"], version=0, title=entry["title"], abstract=entry.get("abstract") or "",
                    pdf_url=f"https://arxiv.org/pdf/{entry['arxiv_id']}",
                    code_urls=[f"https://github.com/{name}" for name in code],
                )
                report.created += 1
                changed.append(paper)
            elif not paper.abstract and entry.get("abstract"):
                Paper.objects.filter(pk=paper.pk).update(abstract=entry["abstract"])
                paper.abstract = entry["abstract"]
                report.filled += 1
                changed.append(paper)
            else:
                report.unchanged += 1
            link_code(paper, code, PaperRepo.Source.SEED)
        for paper in changed:
            index_paper(paper)
    return report

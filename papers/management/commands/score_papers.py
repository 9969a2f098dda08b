"""`manage.py score_papers [--paper ARXIV_ID ...]`: recompute the scorecards (all papers by default,
under a progress bar on a terminal).

Run after changing scoring rules or settings, or to refresh time-dependent judgements (recent
commits, "too fresh"); a paper whose inputs did not change keeps its latest Score row.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from infrawiki.progress import progress
from papers.models import Paper
from papers.scoring.services import score_all, score_paper


class Command(BaseCommand):
    help = "Recompute paper scorecards; a new Score row is written only where the inputs changed."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--paper", action="append", default=[], metavar="ARXIV_ID", help="only these papers")

    def handle(self, *args, **options) -> None:
        if not options["paper"]:
            counts = score_all(papers=progress(Paper.objects.order_by("id").iterator(), "score",
                                               total=Paper.objects.count()))
            self.stdout.write(f"scored {sum(counts.values())} papers: {counts['changed']} changed, "
                              f"{counts['unchanged']} unchanged, {counts['failed']} failed")
            if counts["failed"]:
                raise CommandError(f"{counts['failed']} paper(s) failed; see the papers' pipeline events")
            return
        for arxiv_id in options["paper"]:
            paper = Paper.objects.filter(arxiv_id=arxiv_id).first()
            if paper is None:
                raise CommandError(f"no paper {arxiv_id!r}: crawl or load it first (crawl_arxiv, load_seed)", returncode=2)
            score, changed = score_paper(paper)
            state = "new score" if changed else "unchanged"
            self.stdout.write(f"{arxiv_id}: {score.total:g}/10 {score.get_tier_display()} ({state})")

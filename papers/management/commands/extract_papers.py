"""`python manage.py extract_papers [ARXIV_ID ...] [--all] [--no-llm] [--queue]`: extract stored papers.

For operators: re-run extraction now (in this process, with a progress bar on a terminal) or queue
it on the `extract` queue. Human-reviewed facts are kept as they are (see ontology.services.store_facts).
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from infrawiki.progress import progress
from ontology.services import LlmUnavailable
from papers.models import Paper
from papers.services.extraction import ExtractionFailed, extract_paper


class Command(BaseCommand):
    help = "Extract facts from stored papers (all parsed ones with --all)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("arxiv_ids", nargs="*")
        parser.add_argument("--all", action="store_true", help="every paper with a stored PDF")
        parser.add_argument("--no-llm", action="store_true", help="rule extractors only")
        parser.add_argument("--queue", action="store_true", help="send to the extract queue instead")

    def handle(self, *args, arxiv_ids: list[str], all: bool, no_llm: bool, queue: bool, **options) -> None:  # noqa: A002
        papers = Paper.objects.exclude(pdf_path="")
        if not all:
            if not arxiv_ids:
                raise CommandError("name arXiv ids or pass --all", returncode=2)
            papers = papers.filter(arxiv_id__in=arxiv_ids)
        if not papers.exists():
            raise CommandError("no matching paper with a stored PDF (ingest it first: manage.py ingest_pdf)",
                               returncode=2)
        failures = 0
        bar = progress(list(papers.order_by("arxiv_id")), "extract")
        for paper in bar:
            bar.note(paper.arxiv_id)
            if queue:
                from papers.tasks import extract_paper_task

                extract_paper_task.delay(paper.pk)
                bar.say(self.stdout, f"{paper.arxiv_id}: queued")
                continue
            try:
                run = extract_paper(paper.pk, use_llm=not no_llm)
            except (ExtractionFailed, LlmUnavailable) as exc:
                failures += 1
                bar.say(self.stderr, f"{paper.arxiv_id}: {exc}")
                continue
            bar.say(self.stdout, f"{paper.arxiv_id}: {run.facts_created} new, {run.facts_updated} updated, "
                                 f"{run.facts_kept} reviewed kept, {run.total_s:.1f} s (LLM {run.llm_s:.1f} s)")
        if failures:
            raise CommandError(f"{failures} paper(s) failed")

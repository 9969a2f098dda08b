"""`python manage.py reindex_search [ARXIV_ID ...]`: rebuild search documents (all papers by default).

For operators after the document text format or the embedding model changes (every store path
indexes what it stores, so it is not needed after ingesting); facts themselves are not touched.
Shows a progress bar on a terminal.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand

from infrawiki.progress import progress
from ontology.models import HIDDEN_STATUSES, Fact
from ontology.search_index import index_facts, index_paper
from papers.selectors import papers_by_id


class Command(BaseCommand):
    help = "Rebuild the search documents (embeddings + full-text vectors) of facts, sections and papers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("arxiv_ids", nargs="*")

    def handle(self, *args, arxiv_ids: list[str], **options) -> None:
        papers = papers_by_id(arxiv_ids or None)
        bar = progress(list(papers), "reindex")
        for paper in bar:
            bar.note(paper.arxiv_id)
            facts = index_facts(list(Fact.objects.filter(paper=paper).exclude(status__in=HIDDEN_STATUSES)))
            docs = index_paper(paper)
            bar.say(self.stdout, f"{paper.arxiv_id}: {facts} facts, {docs} paper/section documents")

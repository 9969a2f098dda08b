"""`python manage.py crawl_arxiv [--query Q] [--id ID ...] [--max N] [--atom-file F ...]`: ingest arXiv metadata
from the API (politely, settings.ARXIV_DELAY_S between requests) or from saved API answers, and
print what changed. Exit status 2 when any answer or entry was rejected or unreadable (the
others are still stored, each entry whole or not at all).
"""
from __future__ import annotations

from pathlib import Path

import arxiv
import requests
from django.core.management.base import BaseCommand, CommandError

from papers import arxiv_ids
from papers.services import crawl_arxiv, import_atom_files


class Command(BaseCommand):
    help = "Crawl arXiv (or import saved Atom answers) and print what changed."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--query", help="arXiv search query (default: settings.ARXIV_QUERY)")
        parser.add_argument("--id", nargs="+", default=[], dest="ids", type=arxiv_ids.argument,
                            help="fetch these arXiv ids")
        parser.add_argument("--max", type=int, dest="max_results", help="stop after this many results")
        parser.add_argument("--atom-file", nargs="+", type=Path, default=[],
                            help="saved API answers (Atom XML, or recorded JSON {url, status_code, body})")
        parser.add_argument("--stop-after-empty-pages", type=int, default=None)

    def handle(self, *args, query=None, ids=(), max_results=None, atom_file=(), stop_after_empty_pages=None,
               **options):
        if atom_file:
            report = import_atom_files(list(atom_file))
        else:
            try:
                report = crawl_arxiv(query, max_results, ids=list(ids), stop_after_empty_pages=stop_after_empty_pages)
            except (arxiv.HTTPError, arxiv.UnexpectedEmptyPageError, requests.RequestException) as exc:
                raise CommandError(f"arXiv is unreachable or failing ({exc}); try again later", returncode=2) from exc
        for label, ids in (("new", report.new), ("updated", report.updated)):
            for arxiv_id in ids:
                self.stdout.write(f"{label}: {arxiv_id}")
        for error in report.errors:
            self.stderr.write(f"error: {error}")
        self.stdout.write(("changed: " if report.changed else "nothing changed: ") + report.summary())
        if report.errors:
            raise CommandError(f"{len(report.errors)} answer(s) could not be used; see the errors above", returncode=2)

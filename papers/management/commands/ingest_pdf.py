"""`python manage.py ingest_pdf PATH [--arxiv-id ID] [--json]`: parse a local PDF, store and index it.

With --json prints {"paper": {"title", "arxiv_id"}, "sections": [...], "tables": [...],
"environment": {...}, "parse_s": ...}. A bad file or a bad --arxiv-id prints the reason and exits 2;
nothing stored changes. A PDF that names the arXiv id of a different stored paper is stored as its
own paper and the conflict is recorded for review (stderr says so).
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from papers import arxiv_ids
from papers.pdf import PdfError
from papers.services.pdfs import StorageError, ingest_pdf_file


class Command(BaseCommand):
    help = "Parse a PDF (pages, sections, tables, environment), store it and make it searchable."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--arxiv-id", default=None, type=arxiv_ids.argument,
                            help="the paper's arXiv id, e.g. 2309.06180 or astro-ph/0601001")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, path: Path, arxiv_id=None, as_json=False, **options) -> None:
        if not path.is_file():
            raise CommandError(f"{path} does not exist or is not a file", returncode=2)
        try:
            ingested = ingest_pdf_file(path, arxiv_id=arxiv_id)
        except PdfError as exc:
            raise CommandError(exc.reason, returncode=2) from exc
        except StorageError as exc:
            raise CommandError(exc.reason) from exc
        paper = ingested.paper
        if ingested.identity and ingested.identity.held:
            self.stderr.write(f"note: stored as {paper.arxiv_id}; {ingested.identity.note()} (see the review queue)")
        sections = list(paper.sections.order_by("order"))
        tables = list(paper.tables.order_by("order"))
        if not as_json:
            self.stdout.write(f"{paper.arxiv_id}: {paper.title} — {len(sections)} sections, {len(tables)} tables")
            return
        self.stdout.write(json.dumps({
            "paper": {"title": paper.title, "arxiv_id": paper.arxiv_id},
            "sections": [{"title": s.title, "number": s.number, "page_start": s.page_start,
                          "page_end": s.page_end, "chars": len(s.text)} for s in sections],
            "tables": [{"page": t.page, "rows": t.n_rows, "cols": t.n_cols, "caption": t.caption} for t in tables],
            "environment": paper.environment,
            "parse_s": round(ingested.parse_s, 3),
        }, indent=1, ensure_ascii=False))

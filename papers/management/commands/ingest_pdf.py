"""`python manage.py ingest_pdf PATH [--arxiv-id ID] [--json]`: parse a local PDF and store it.

With --json prints {"paper": {"title", "arxiv_id"}, "sections": [...], "tables": [...],
"environment": {...}, "parse_s": ...}. A bad file prints the reason and exits 1; nothing stored changes.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from papers import arxiv_ids
from papers.pdf import PdfError
from papers.services import ingest_pdf
from papers.services.pdfs import StorageError


class Command(BaseCommand):
    help = "Parse a PDF (sections, tables, environment) and store it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--arxiv-id", default=None, type=arxiv_ids.argument,
                            help="the paper's arXiv id, e.g. 2309.06180 or astro-ph/0601001")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, path: Path, arxiv_id=None, as_json=False, **options) -> None:
        if not path.is_file():
            raise CommandError(f"{path} does not exist or is not a file")
        try:
            paper = ingest_pdf(path, arxiv_id=arxiv_id)
        except (PdfError, StorageError) as exc:
            raise CommandError(exc.reason) from exc
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
            "parse_s": round(getattr(paper, "parse_s", 0.0), 3),
        }, indent=1, ensure_ascii=False))

"""`python manage.py export_knowledge FILE`: every paper, its facts (with review status and
revision history), outline and score as JSON Lines (gzip when FILE ends in .gz), for import_knowledge."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from knowledge.export import export_knowledge


class Command(BaseCommand):
    help = "Export this instance's knowledge (papers, facts, reviews, revisions) to a JSON Lines file."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options) -> None:
        try:
            count = export_knowledge(file)
        except OSError as exc:
            raise CommandError(f"cannot write {file}: {exc.strerror or exc}") from exc
        self.stdout.write(f"exported {count} papers to {file}")

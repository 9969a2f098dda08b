"""`python manage.py import_knowledge FILE`: load an export_knowledge file (or the starter pack).

Idempotent; reviewed facts here are never overwritten by machine facts from the file. Exits 1
after loading everything it could when some lines were bad, listing them.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from knowledge.load import import_knowledge
from knowledge.records import KnowledgeFileError


class Command(BaseCommand):
    help = "Import papers, facts, reviews and revisions from a knowledge file (export_knowledge's output)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options) -> None:
        if not file.is_file():
            raise CommandError(f"{file} does not exist; give the path of a file written by export_knowledge")
        try:
            report = import_knowledge(file)
        except KnowledgeFileError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report.summary())
        if report.errors:
            raise CommandError("some records were not imported:\n  " + "\n  ".join(report.errors[:50]))

"""`python manage.py load_seed`: load the bundled seed papers (run by `make run`); idempotent."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from papers.services import load_seed


class Command(BaseCommand):
    help = "Load the bundled list of real LLM-infrastructure papers (papers/seed/papers.json)."

    def handle(self, *args, **options) -> None:
        report = load_seed()
        self.stdout.write(f"seed papers: {report.created} created, {report.filled} filled in, "
                          f"{report.unchanged} unchanged")

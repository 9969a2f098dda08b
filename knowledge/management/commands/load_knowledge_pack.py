"""`python manage.py load_knowledge_pack`: load the bundled starter pack (run by `make run`); idempotent."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from knowledge.pack import PACK_FILE, load_pack


class Command(BaseCommand):
    help = f"Load the bundled starter knowledge pack ({PACK_FILE.name})."

    def handle(self, *args, **options) -> None:
        report = load_pack()
        self.stdout.write(f"knowledge pack: {report.summary()}")
        for error in report.errors:
            self.stderr.write(f"knowledge pack: {error}")

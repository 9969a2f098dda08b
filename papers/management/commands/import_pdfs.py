"""`python manage.py import_pdfs PATH... [--no-llm]`: import a person's PDFs (files or folders).

Each PDF is identified (arXiv stamp, file name, or the title of a stored paper), stored once by
sha256 (duplicates are skipped), parsed, extracted (with the LLM when its server answers) and
searchable at once. A progress bar runs on a terminal; one line per file says what happened. Files
that fail are listed with their reason and the command exits 2 after doing the others.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from infrawiki.progress import progress
from papers.services.imports import available_llm, import_pdf, pdf_files


class Command(BaseCommand):
    help = "Import PDFs from files or folders: store, extract and index each, skipping duplicates."

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, metavar="PATH")
        parser.add_argument("--no-llm", action="store_true", help="rule extractors only")

    def handle(self, *args, paths: list[Path], no_llm: bool = False, **options) -> None:
        files, missing = pdf_files(paths)
        for path in missing:
            self.stderr.write(f"{path}: no such file or folder")
        if not files:
            raise CommandError("no PDF files found in " + ", ".join(map(str, paths)), returncode=2)
        llm = None if no_llm else available_llm()
        if llm is None and not no_llm:
            self.stderr.write("LLM server not reachable: rule extractors only (start it with `make run`)")
        counts: Counter[str] = Counter()
        bar = progress(files, "import")
        for path in bar:
            bar.note(path.name)
            outcome = import_pdf(path, llm)
            counts[outcome.status] += 1
            bar.say(self.stderr if outcome.status == "failed" else self.stdout, outcome.line())
        self.stdout.write(f"{counts['stored']} stored, {counts['duplicate']} duplicates skipped, "
                          f"{counts['failed']} failed")
        if counts["failed"] or missing:
            raise CommandError(f"{counts['failed'] + len(missing)} path(s) could not be imported; see above",
                               returncode=2)

"""`python manage.py build_knowledge_pack PDF_DIR [--out F] [--as-of DATE] [--llm] [--check]`.

Rebuilds the starter knowledge pack from a folder of paper PDFs with the current extraction rules
(run it after changing extraction or scoring, then commit the pack). `--check` rebuilds in memory
and exits 1 when the shipped pack differs, naming the papers whose facts changed.
"""
from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from knowledge.pack import PACK_FILE, build_pack, default_as_of
from knowledge.records import KnowledgeFileError, read_file


def _as_of(text: str) -> datetime:
    try:
        day = datetime.strptime(text, "%Y-%m-%d")
    except ValueError as exc:
        raise CommandError(f"--as-of {text!r}: give a date as YYYY-MM-DD") from exc
    return day.replace(tzinfo=UTC)


def _facts_by_paper(path: Path) -> dict[str, list[dict]]:
    _, lines = read_file(path)
    return {record.arxiv_id: [f.model_dump() for f in record.facts] for _, record in lines if not isinstance(record, str)}


class Command(BaseCommand):
    help = "Build the starter knowledge pack from a folder of PDFs (deterministic; rule extraction by default)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("pdf_dir", type=Path)
        parser.add_argument("--out", type=Path, default=PACK_FILE, help=f"default: {PACK_FILE}")
        parser.add_argument("--as-of", help="scoring date YYYY-MM-DD (default: today, or the pack's own with --check)")
        parser.add_argument("--llm", action="store_true", help="also run the LLM trade-off extractor")
        parser.add_argument("--check", action="store_true", help="compare a rebuild with --out instead of writing it")

    def handle(self, *args, pdf_dir: Path, out: Path, as_of: str | None, llm: bool, check: bool, **options) -> None:
        if not pdf_dir.is_dir():
            raise CommandError(f"{pdf_dir} is not a folder of PDFs")
        extractor = None
        if llm:
            from ontology.services import default_llm_extractor

            extractor = default_llm_extractor()
        date = _as_of(as_of) if as_of else None
        if check:
            self._check(pdf_dir, out, date, extractor)
            return
        count = build_pack(pdf_dir, out, date or default_as_of(), extractor, progress=self.stderr.write)
        self.stdout.write(f"wrote {count} papers to {out} ({out.stat().st_size:,} bytes)")

    def _check(self, pdf_dir: Path, out: Path, date: datetime | None, extractor) -> None:
        try:
            header, _ = read_file(out)
        except KnowledgeFileError as exc:
            raise CommandError(str(exc)) from exc
        with tempfile.TemporaryDirectory() as tmp:
            rebuilt = Path(tmp) / out.name
            build_pack(pdf_dir, rebuilt, date or header.as_of or default_as_of(), extractor, progress=self.stderr.write)
            if rebuilt.read_bytes() == out.read_bytes():
                self.stdout.write(f"{out} is up to date")
                return
            shipped, fresh = _facts_by_paper(out), _facts_by_paper(rebuilt)
        changed = sorted(k for k in shipped.keys() | fresh.keys() if shipped.get(k) != fresh.get(k))
        raise CommandError(f"{out} is out of date; facts differ for: {', '.join(changed) or '(none: other fields)'}. "
                           f"Rebuild it: python manage.py build_knowledge_pack {pdf_dir}")

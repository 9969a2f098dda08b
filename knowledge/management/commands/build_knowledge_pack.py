"""`python manage.py build_knowledge_pack [--out F] [--as-of DATE] [--llm] [--check] [--vectors-only]`.

Rebuilds the starter knowledge pack, and the embeddings shipped beside it, from every paper we may
read (knowledge.sources.default_folders: ../shared/corpus/pdfs, ../shared/corpus/pdfs_extra and
tests/data/papers/pdfs) with the current extraction (run it after changing extraction or scoring,
then commit both files). `--check` rebuilds in memory and exits 1 when the shipped pack differs,
naming the papers whose facts changed. `--vectors-only` rewrites the shipped vectors of the pack as it
stands (one file per precision the embedding model computes in), extracting nothing.
"""
from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from knowledge.pack import PACK_FILE, build_pack, default_as_of
from knowledge.pack_vectors import missing_vectors, vectors_paths, write_all_vectors
from knowledge.records import KnowledgeFileError, PaperRecord, read_file
from knowledge.sources import PdfFolder, default_folders


def _as_of(text: str) -> datetime:
    try:
        day = datetime.strptime(text, "%Y-%m-%d")
    except ValueError as exc:
        raise CommandError(f"--as-of {text!r}: give a date as YYYY-MM-DD") from exc
    return day.replace(tzinfo=UTC)


def _records(path: Path) -> list[PaperRecord]:
    try:
        _, lines = read_file(path)
    except KnowledgeFileError as exc:
        raise CommandError(str(exc)) from exc
    return [record for _, record in lines if not isinstance(record, str)]


def _facts_by_paper(path: Path) -> dict[str, list[dict]]:
    return {record.arxiv_id: [f.model_dump() for f in record.facts] for record in _records(path)}


class Command(BaseCommand):
    help = "Build the starter knowledge pack from every paper we may read (deterministic; rule extraction by default)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--out", type=Path, default=PACK_FILE, help=f"default: {PACK_FILE}")
        parser.add_argument("--as-of", help="scoring date YYYY-MM-DD (default: today, or the pack's own with --check)")
        parser.add_argument("--llm", action="store_true", help="also run the LLM trade-off extractor")
        parser.add_argument("--check", action="store_true", help="compare a rebuild with --out instead of writing it")
        parser.add_argument("--jobs", type=int, default=1, help="PDFs read at once (rules only; the output is the same)")
        parser.add_argument("--vectors-only", action="store_true",
                            help="rewrite the vectors beside --out for the pack as it stands (no extraction)")

    def handle(self, *args, out: Path, as_of: str | None, llm: bool, check: bool, jobs: int, vectors_only: bool,
               **options) -> None:
        self.jobs = max(1, jobs)
        if vectors_only:
            count = write_all_vectors(out, _records(out))
            self.stdout.write(f"wrote {count} vectors per precision beside {out}")
            return
        folders = default_folders()
        extractor = None
        if llm:
            from ontology.services import default_llm_extractor

            extractor = default_llm_extractor()
        date = _as_of(as_of) if as_of else None
        if check:
            self._check(folders, out, date, extractor)
            return
        count = self._build(folders, out, date or default_as_of(), extractor, self.stderr.write)
        self.stdout.write(f"wrote {count} papers to {out} ({out.stat().st_size:,} bytes)")

    def _build(self, folders: list[PdfFolder], out: Path, date: datetime, extractor, progress) -> int:
        try:
            return build_pack(folders, out, date, extractor, progress=progress, jobs=self.jobs)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

    def _check(self, folders: list[PdfFolder], out: Path, date: datetime | None, extractor) -> None:
        try:
            header, _ = read_file(out)
        except KnowledgeFileError as exc:
            raise CommandError(str(exc)) from exc
        with tempfile.TemporaryDirectory() as tmp:
            rebuilt = Path(tmp) / out.name
            self._build(folders, rebuilt, date or header.as_of or default_as_of(), extractor, self.stderr.write)
            if rebuilt.read_bytes() == out.read_bytes():
                records = _records(out)
                for path in vectors_paths(out):
                    missing = missing_vectors(path, records)
                    if missing:
                        raise CommandError(f"{path} lacks the vectors of {len(missing)} text(s) of the pack (first: "
                                           f"{missing[0][:80]!r}). Rewrite them: python manage.py build_knowledge_pack "
                                           "--vectors-only")
                self.stdout.write(f"{out} and its vectors are up to date")
                return
            shipped, fresh = _facts_by_paper(out), _facts_by_paper(rebuilt)
        changed = sorted(k for k in shipped.keys() | fresh.keys() if shipped.get(k) != fresh.get(k))
        raise CommandError(f"{out} is out of date; facts differ for: {', '.join(changed) or '(none: other fields)'}. "
                           "Rebuild it: python manage.py build_knowledge_pack")

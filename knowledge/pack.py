"""The starter knowledge pack: our own pipeline run over a folder of paper PDFs, shipped as data.

`build_knowledge_pack PDF_DIR` writes it (parse -> rule extraction [-> LLM with --llm] -> score,
the same steps a crawled paper goes through); `make run` loads it through import_knowledge, so a
fresh install shows papers with facts, outlines and scores before any PDF is downloaded. What it
holds is listed in pack/SOURCES.md: metadata, outlines, table captions, environment fingerprints,
scores and facts with quotes of at most MAX_QUOTE characters — never a PDF or its text.
Output is deterministic: the same PDFs, extraction rules and `as_of` give the same bytes.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from knowledge.load import ImportReport, import_knowledge
from knowledge.records import (
    FactRecord,
    Header,
    PaperRecord,
    ScoreRecord,
    SectionRecord,
    TableRecord,
    write_file,
)
from ontology.services import FactExtractor, extract_document
from papers.selectors import (
    RepoInput,
    ScoringInput,
    card_fields,
    fact_input,
    github_repos,
    score,
    scoring_config,
    seed_entries,
    text_parts_of,
)
from papers.services import ParsedPdf, parse_pdf

PACK_DIR = Path(__file__).resolve().parent / "pack"
PACK_FILE = PACK_DIR / "knowledge-pack.v1.jsonl.gz"
PACK_ORIGIN = "knowledge pack v1"
NOTICE = ("Facts, outlines and scores extracted by InfraWiki from the arXiv papers named in each record; "
          "quotes are short excerpts with page numbers, attributed to the paper. No PDF or full text is included.")
_ARXIV_FILE_NAME = re.compile(r"^\d{4}\.\d{4,5}$")


def _arxiv_id(path: Path, parsed: ParsedPdf) -> str:
    if parsed.arxiv_id:
        return parsed.arxiv_id
    if _ARXIV_FILE_NAME.match(path.stem):
        return path.stem
    raise ValueError(f"{path.name}: no arXiv id in the PDF's stamp or its file name (name it like 2309.06180.pdf)")


def paper_record(path: Path, seed: dict, as_of: datetime, llm: FactExtractor | None = None) -> PaperRecord:
    """One PDF through the pipeline: parse, extract, score — as a knowledge record (no text kept)."""
    parsed = parse_pdf(path)
    arxiv_id = _arxiv_id(path, parsed)
    entry = seed.get(arxiv_id, {})
    title = entry.get("title") or parsed.title
    abstract = parsed.abstract or entry.get("abstract") or ""
    # the one reading of the PDF, as the pipeline hands it over, under the seed list's curated title
    facts = extract_document(replace(parsed, title=title, abstract=abstract), llm=llm).facts
    code = github_repos(entry.get("code_url") or "") or github_repos(parsed.abstract)
    card = score(ScoringInput(
        arxiv_id=arxiv_id, title=title, code_urls=tuple(f"https://github.com/{name}" for name in code),
        repos=tuple(RepoInput(full_name=name) for name in code),
        texts=text_parts_of(abstract, parsed.sections),
        facts=tuple(fact_input(f) for f in facts if f["kind"] == "parameter"), facts_extracted=True,
    ), as_of, scoring_config())
    return PaperRecord(
        arxiv_id=arxiv_id, version=parsed.arxiv_version or 0, title=title, abstract=abstract,
        pdf_url=f"https://arxiv.org/pdf/{arxiv_id}", code_urls=[f"https://github.com/{name}" for name in code],
        page_count=parsed.page_count, environment=parsed.environment, read_from_pdf=True,
        sections=[SectionRecord(number=s.number, title=s.title, page_start=s.page_start, page_end=s.page_end)
                  for s in parsed.sections],
        tables=[TableRecord(page=t.page, caption=t.caption, n_rows=t.n_rows, n_cols=t.n_cols) for t in parsed.tables],
        score=ScoreRecord(**card_fields(card, as_of)),
        facts=[FactRecord(**{name: fact.get(name) for name in FactRecord.model_fields
                             if name not in {"status", "fingerprint", "revisions", "techniques"}}) for fact in facts],
    )


def build_records(pdf_dir: Path, as_of: datetime, llm: FactExtractor | None = None,
                  progress: Callable[[str], None] | None = None) -> list[PaperRecord]:
    """Records of every *.pdf in `pdf_dir`, in arXiv-id order."""
    seed = seed_entries()
    paths = sorted(pdf_dir.glob("*.pdf"))
    if not paths:
        raise ValueError(f"no *.pdf files in {pdf_dir}")
    records = []
    for n, path in enumerate(paths, start=1):
        if progress:
            progress(f"[{n}/{len(paths)}] {path.name}")
        records.append(paper_record(path, seed, as_of, llm))
    return sorted(records, key=lambda record: record.arxiv_id)


def pack_header(as_of: datetime, extractor: str = "rules") -> Header:
    return Header(origin=PACK_ORIGIN, as_of=as_of, notice=f"{NOTICE} Extracted with: {extractor}.")


def build_pack(pdf_dir: Path, out: Path, as_of: datetime, llm: FactExtractor | None = None,
               progress: Callable[[str], None] | None = None) -> int:
    """Build the pack from `pdf_dir` into `out`; returns how many papers it holds."""
    records = build_records(pdf_dir, as_of, llm, progress)
    return write_file(out, pack_header(as_of, "rules+llm" if llm else "rules"), records)


def default_as_of() -> datetime:
    """Midnight UTC today: scores depend on the date (recent commits, too-fresh papers), not the hour."""
    today = datetime.now(UTC).date()
    return datetime(today.year, today.month, today.day, tzinfo=UTC)


def load_pack(path: Path = PACK_FILE) -> ImportReport:
    """Load the bundled pack (make run); a no-op when it was loaded before and nothing changed."""
    return import_knowledge(path, actor=PACK_ORIGIN)

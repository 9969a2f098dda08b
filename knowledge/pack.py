"""The starter knowledge pack: our own pipeline run over every paper PDF we may read, shipped as data.

`build_knowledge_pack` writes it (the folders are knowledge.sources.default_folders) (parse -> rule extraction [-> LLM with --llm] -> score,
the same steps a crawled paper goes through); `make run` loads it through import_knowledge, so a
fresh install shows papers with facts, outlines and scores before any PDF is downloaded. What it
holds is listed in pack/SOURCES.md: metadata, outlines, table captions, environment fingerprints,
scores and facts with quotes of at most MAX_QUOTE characters — never a PDF or its text.
Output is deterministic: the same PDFs, extraction rules and `as_of` give the same bytes.
"""
from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from knowledge.load import ImportReport, import_knowledge
from knowledge.pack_vectors import offer_vectors, write_all_vectors
from knowledge.records import (
    FactRecord,
    Header,
    PaperRecord,
    ScoreRecord,
    SectionRecord,
    TableRecord,
    write_file,
)
from knowledge.sources import KnownPaper, PdfFolder, identify, known_papers, pdf_provenance
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
from papers.services import parse_pdf

PACK_DIR = Path(__file__).resolve().parent / "pack"
PACK_FILE = PACK_DIR / "knowledge-pack.v1.jsonl.gz"
PACK_ORIGIN = "knowledge pack v1"
MAX_ABSTRACT_CHARS = 2000  # abstracts run 1,000-1,900 characters; past this the parser read on into the body
NOTICE = ("Facts, outlines and scores extracted by InfraWiki from the papers named in each record (arXiv id, or a "
          "local id with the PDF's source); quotes are short excerpts with page numbers, attributed to the paper. "
          "No PDF or full text is included.")


def short_abstract(text: str) -> str:
    """The parsed abstract, cut at the last sentence end within MAX_ABSTRACT_CHARS: where the parser
    could not find the abstract's end it runs on into the paper's text, which the pack never ships."""
    if len(text) <= MAX_ABSTRACT_CHARS:
        return text
    head = text[:MAX_ABSTRACT_CHARS]
    end = max(head.rfind(". "), head.rfind(".\n"))
    return head[:end + 1] if end > 0 else head


def paper_record(path: Path, seed: dict, as_of: datetime, llm: FactExtractor | None = None,
                 folder: PdfFolder | None = None, known: list[KnownPaper] | None = None) -> PaperRecord:
    """One PDF through the pipeline: parse, identify, extract, score — as a knowledge record (no text kept)."""
    parsed = parse_pdf(path)
    identity = identify(path, parsed, known if known is not None else known_papers(seed))
    arxiv_id = identity.key
    entry = seed.get(arxiv_id, {})
    title = entry.get("title") or parsed.title
    abstract = short_abstract(parsed.abstract) or entry.get("abstract") or ""
    # the one reading of the PDF, as the pipeline hands it over, under the seed list's curated title
    facts = extract_document(replace(parsed, title=title, abstract=abstract), llm=llm).facts
    code = github_repos(entry.get("code_url") or "") or github_repos(parsed.abstract)
    card = score(ScoringInput(
        arxiv_id=arxiv_id, title=title, code_urls=tuple(f"https://github.com/{name}" for name in code),
        repos=tuple(RepoInput(full_name=name) for name in code),
        texts=text_parts_of(abstract, parsed.sections),
        facts=tuple(fact_input(f) for f in facts if f["kind"] == "parameter"), facts_extracted=True,
    ), as_of, scoring_config())
    source = {"file": path.name, "identified_by": identity.how}
    if folder is not None:
        source.update(pdf_provenance(path, folder))
    return PaperRecord(
        arxiv_id=arxiv_id, version=parsed.arxiv_version or 0, title=title, abstract=abstract,
        pdf_url=f"https://arxiv.org/pdf/{arxiv_id}" if identity.how != "local id" else "",
        code_urls=[f"https://github.com/{name}" for name in code],
        page_count=parsed.page_count, environment=parsed.environment, read_from_pdf=True, pdf_source=source,
        # a heading or caption the parser ran on past its end is cut to the record's limit, never shipped whole
        sections=[SectionRecord(number=s.number[:20], title=s.title[:1000], page_start=s.page_start,
                                page_end=max(s.page_start, s.page_end)) for s in parsed.sections],
        tables=[TableRecord(page=t.page, caption=t.caption[:2000], n_rows=t.n_rows, n_cols=t.n_cols)
                for t in parsed.tables],
        score=ScoreRecord(**card_fields(card, as_of)),
        facts=[FactRecord(**{name: fact.get(name) for name in FactRecord.model_fields
                             if name not in {"status", "fingerprint", "revisions", "techniques"}}) for fact in facts],
    )


def pack_pdfs(folders: list[PdfFolder]) -> list[tuple[Path, PdfFolder]]:
    """Every *.pdf of `folders`, in folder then name order. A missing folder is an error naming it:
    a pack built from part of the papers would silently drop the others'."""
    found = []
    for folder in folders:
        paths = sorted(folder.folder.glob("*.pdf"))
        if not paths:
            raise ValueError(f"no *.pdf files in {folder.folder} (listed in {folder.listed_in}); "
                             f"restore them from the sources that file names")
        found.extend((path, folder) for path in paths)
    return found


def _record_of(job: tuple[Path, PdfFolder, datetime, FactExtractor | None]) -> PaperRecord:
    path, folder, as_of, llm = job
    seed = seed_entries()
    try:
        return paper_record(path, seed, as_of, llm, folder, known_papers(seed))
    except ValueError as exc:
        raise ValueError(f"{path.name}: {exc}") from exc


def build_records(folders: list[PdfFolder], as_of: datetime, llm: FactExtractor | None = None,
                  progress: Callable[[str], None] | None = None, jobs: int = 1) -> list[PaperRecord]:
    """Records of every PDF of `folders`, in id order. Two PDFs of one paper keep the first folder's.

    `jobs` > 1 reads that many PDFs at once in forked processes (the rule extraction is CPU-bound and
    each paper is independent); the result does not depend on it."""
    pdfs = pack_pdfs(folders)
    work = [(path, folder, as_of, llm) for path, folder in pdfs]
    if jobs > 1 and llm is None:
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
        results: Iterable[PaperRecord] = pool.map(_record_of, work)
    else:
        pool, results = None, map(_record_of, work)
    records: dict[str, PaperRecord] = {}
    try:
        for n, ((path, _), record) in enumerate(zip(pdfs, results, strict=True), start=1):
            if progress:
                progress(f"[{n}/{len(pdfs)}] {path.name} -> {record.arxiv_id} "
                         f"({record.pdf_source['identified_by']}, {len(record.facts)} facts)")
            records.setdefault(record.arxiv_id, record)
    finally:
        if pool is not None:
            pool.shutdown()
    return [records[key] for key in sorted(records)]


def pack_header(as_of: datetime, extractor: str = "rules") -> Header:
    return Header(origin=PACK_ORIGIN, as_of=as_of, notice=f"{NOTICE} Extracted with: {extractor}.")


def build_pack(folders: list[PdfFolder], out: Path, as_of: datetime, llm: FactExtractor | None = None,
               progress: Callable[[str], None] | None = None, jobs: int = 1) -> int:
    """Build the pack, and its vectors beside it, from `folders` into `out`; returns how many papers it holds."""
    records = build_records(folders, as_of, llm, progress, jobs)
    count = write_file(out, pack_header(as_of, "rules+llm" if llm else "rules"), records)
    write_all_vectors(out, records)
    return count


def default_as_of() -> datetime:
    """Midnight UTC today: scores depend on the date (recent commits, too-fresh papers), not the hour."""
    today = datetime.now(UTC).date()
    return datetime(today.year, today.month, today.day, tzinfo=UTC)


def load_pack(path: Path = PACK_FILE) -> ImportReport:
    """Load the bundled pack (make run); a no-op when it was loaded before and nothing changed.
    Its shipped vectors go to the embedding cache first, so indexing it embeds nothing they cover."""
    offer_vectors(path)
    return import_knowledge(path, actor=PACK_ORIGIN)

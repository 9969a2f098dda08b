"""Which PDFs the starter pack is built from, where each came from, and which paper each one is.

Used by `build_knowledge_pack` (knowledge/pack.py). The pack reads every paper we may read: the
shared corpus (`corpus/pdfs`, `corpus/pdfs_extra`) and the public PDFs of tests/data/papers. Each
folder has a SOURCES file listing every PDF's repository, path and commit; the pack entry carries
that line's facts, so a reader can fetch the same bytes. A PDF is an arXiv paper when it says so
(its arXiv margin stamp) or when its title is a known paper's (the seed list, the corpus's arXiv
metadata); otherwise it gets a local id from its bytes, never a guessed arXiv id.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from infrawiki.env import shared_dir
from papers.selectors import TITLE_MATCHES, local_id, title_overlap
from papers.services import ParsedPdf

ROOT = Path(__file__).resolve().parent.parent
_COMMIT = re.compile(r"`?\b([0-9a-f]{40})\b`?")
_GITHUB = re.compile(r"github\.com/([\w.-]+/[\w.-]+?)(?:[/\s)`]|$)")
_REPO_COLUMN = re.compile(r"([\w.-]+/[\w.-]+) ·")
_BACKTICKED = re.compile(r"`([^`]+)`")
_WORD = re.compile(r"[a-z0-9]+")
_HEAD_CHARS = 600
MIN_SQUASHED_TITLE = 20  # a known title found verbatim at the head of page 1 must be at least this long


@dataclass(frozen=True)
class PdfFolder:
    """A folder of PDFs and the SOURCES file (relative name `listed_in`) that says where each came from."""
    folder: Path
    sources_file: Path
    listed_in: str


def default_folders() -> list[PdfFolder]:
    """Every paper we may read: the shared corpus and the public PDFs of tests/data/papers."""
    corpus = shared_dir() / "corpus"
    papers = ROOT / "tests/data/papers"  # the unseen-paper PDFs, not the papers app
    return [PdfFolder(corpus / "pdfs", corpus / "SOURCES.md", "corpus/SOURCES.md"),
            PdfFolder(corpus / "pdfs_extra", corpus / "SOURCES_extra.md", "corpus/SOURCES_extra.md"),
            PdfFolder(papers / "pdfs", papers / "SOURCES.md", "tests/data/papers/SOURCES.md")]


def _entry_text(lines: list[str], name: str) -> str:
    """The SOURCES file's entry for `name`: its table row, or its list item with the lines under it."""
    for i, line in enumerate(lines):
        if f"`{name}`" not in line and f"/{name}`" not in line:
            continue
        if line.lstrip().startswith("|"):
            return line
        block = [line]
        indent = len(line) - len(line.lstrip())
        for below in lines[i + 1:]:
            if below.strip() and len(below) - len(below.lstrip()) <= indent:
                break
            block.append(below)
        return "\n".join(block)
    return ""


def pdf_provenance(pdf: Path, folder: PdfFolder) -> dict[str, str]:
    """Where `pdf` came from, as its SOURCES file says: repository, path, commit, and which file says so.

    A field the entry does not name is taken from the file's preamble (one repository and commit for
    the whole folder), else left out. A PDF the SOURCES file does not list is an error: the pack
    never holds a paper whose origin nobody wrote down."""
    text = folder.sources_file.read_text(encoding="utf-8")
    lines = text.splitlines()
    entry = _entry_text(lines, pdf.name)
    if not entry:
        raise ValueError(f"{pdf.name} is not listed in {folder.listed_in}: say where it came from before packing it")
    preamble = text.split("\n|", 1)[0]
    found: dict[str, str] = {"listed_in": folder.listed_in}
    repo = _REPO_COLUMN.search(entry) or _GITHUB.search(entry) or _GITHUB.search(preamble)
    commit = _COMMIT.search(entry) or _COMMIT.search(preamble)
    paths = [p for p in _BACKTICKED.findall(entry) if "/" in p and not p.startswith(("pdfs/", "pdfs_extra/"))]
    if repo:
        found["repository"] = repo.group(1)
    if commit:
        found["commit"] = commit.group(1)
    if paths:
        found["path"] = paths[0]
    return found


@dataclass(frozen=True)
class KnownPaper:
    arxiv_id: str
    title: str


def known_papers(seed: dict[str, dict]) -> list[KnownPaper]:
    """Titles that name an arXiv paper: the seed list's, and the corpus's arXiv metadata (with variants)."""
    known = [KnownPaper(arxiv_id, entry["title"]) for arxiv_id, entry in seed.items() if entry.get("title")]
    listing = shared_dir() / "corpus" / "papers.jsonl"
    if listing.is_file():
        for line in listing.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            for title in [row.get("title") or "", *(row.get("title_variants") or [])]:
                if title:
                    known.append(KnownPaper(row["arxiv_id"], title))
    return sorted(set(known), key=lambda k: (k.arxiv_id, k.title))


def _squash(text: str) -> str:
    return "".join(_WORD.findall(text.casefold()))


def _head(parsed: ParsedPdf) -> str:
    first = parsed.page_texts[0] if parsed.page_texts else ""
    start = first.find(parsed.abstract[:60]) if len(parsed.abstract) >= 60 else -1
    return first[:start] if start > 0 else first[:_HEAD_CHARS]


def match_title(parsed: ParsedPdf, known: list[KnownPaper]) -> str | None:
    """The arXiv id whose known title is this PDF's: the parsed title's words mostly agree, or the
    known title is printed at the head of page 1. None when nothing matches or two papers tie."""
    head = _squash(_head(parsed))
    scored: dict[str, float] = {}
    for paper in known:
        overlap = title_overlap(paper.title, parsed.title)
        squashed = _squash(paper.title)
        if len(squashed) >= MIN_SQUASHED_TITLE and squashed in head:
            overlap = max(overlap, 1.0)
        if overlap >= TITLE_MATCHES:
            scored[paper.arxiv_id] = max(scored.get(paper.arxiv_id, 0.0), overlap)
    if not scored:
        return None
    best = max(scored.values())
    winners = [arxiv_id for arxiv_id, value in scored.items() if value == best]
    return winners[0] if len(winners) == 1 else None


@dataclass(frozen=True)
class PackIdentity:
    key: str  # arXiv id, or a local id `sha256:…`
    how: str  # "arXiv stamp" | "title" | "local id"


def identify(pdf: Path, parsed: ParsedPdf, known: list[KnownPaper]) -> PackIdentity:
    """Which paper `pdf` is: its stamp, else a known title, else a local id from its bytes."""
    if parsed.arxiv_id:
        return PackIdentity(parsed.arxiv_id, "arXiv stamp")
    by_title = match_title(parsed, known)
    if by_title:
        return PackIdentity(by_title, "title")
    return PackIdentity(local_id(hashlib.sha256(pdf.read_bytes()).hexdigest()), "local id")


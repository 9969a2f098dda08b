"""`parse_pdf(path) -> ParsedPdf`: the one entry point for turning a paper PDF into structure.

Runs in Celery parse workers, the ingest_pdf command and the benchmark. Django-free on purpose.
Bad files (not a PDF, encrypted, truncated beyond repair, no text layer) raise `PdfError` with a
reason a person can act on; nothing is half-parsed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pymupdf

from ontology.extraction.text import collapse
from papers.cleaning import clean_text
from papers.pdf.environment import find_environment
from papers.pdf.lines import Line, body_size, page_lines
from papers.pdf.model import ParsedPdf, ParsedSection, PdfError
from papers.pdf.structure import (
    Heading,
    find_abstract,
    find_title,
    join_text,
    outline_headings,
    references_heading,
    rule_headings,
)
from papers.pdf.tables import extract_tables, find_captions

_ARXIV_STAMP = re.compile(r"arXiv:(\d{4}\.\d{4,5})(?:v(\d+))?")
_MIN_TEXT_CHARS = 200


def _open(path: Path) -> pymupdf.Document:
    try:
        head = path.read_bytes()[:1024]
    except OSError as exc:
        raise PdfError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if b"%PDF-" not in head:
        raise PdfError(f"{path.name} is not a PDF (no %PDF- header); check the download URL or file")
    try:
        doc = pymupdf.open(path)
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise PdfError(f"{path.name} is corrupt and could not be repaired ({exc}); download it again") from exc
    if doc.needs_pass or doc.is_encrypted:
        raise PdfError(f"{path.name} is password-protected; supply an unencrypted copy")
    if doc.page_count == 0:
        raise PdfError(f"{path.name} has no pages (truncated download?); download it again")
    return doc


def _all_lines(doc: pymupdf.Document) -> tuple[list[Line], list[str], list[str], list[str]]:
    """Lines with fonts, each page's lines joined, rotated texts, and each page in quote form.

    The quote form is `page.get_text()` collapsed: the text FACTS_FORMAT.md quotes are exact spans of,
    read here from the same open document so extraction never opens the PDF again.
    """
    lines: list[Line] = []
    line_texts: list[str] = []
    rotated: list[str] = []
    quote_texts: list[str] = []
    for page in doc:
        try:
            page_part, page_rotated = page_lines(page)
            quote_texts.append(clean_text(collapse(page.get_text())))
        except RuntimeError as exc:  # a damaged page fails the parse, naming the page
            raise PdfError(f"page {page.number + 1} is damaged ({exc}); download the PDF again") from exc
        lines.extend(page_part)
        rotated.extend(page_rotated)
        line_texts.append("\n".join(line.text for line in page_part))
    return lines, line_texts, rotated, quote_texts


def _sections(lines: list[Line], headings: list[Heading]) -> list[ParsedSection]:
    sections: list[ParsedSection] = []
    for n, heading in enumerate(headings):
        if heading.title.casefold() == "abstract":
            continue
        start = heading.index + heading.lines
        end = headings[n + 1].index if n + 1 < len(headings) else len(lines)
        body = lines[start:end]
        page_start = lines[heading.index].page
        page_end = body[-1].page if body else page_start
        sections.append(ParsedSection(heading.title, heading.number, heading.level, page_start, page_end,
                                      join_text([line.text for line in body])))
    return sections


def parse_pdf(path: str | Path, *, detect_tables: bool = True) -> ParsedPdf:
    """Parse one paper: title, abstract, sections with page ranges, tables, captions, environment.

    Table detection is ~90% of the cost; callers that only need text and structure (title,
    abstract, sections) pass detect_tables=False and get `tables == []`.
    """
    path = Path(path)
    doc = _open(path)
    try:
        lines, line_texts, rotated, page_texts = _all_lines(doc)
        if sum(len(text) for text in line_texts) < _MIN_TEXT_CHARS:
            raise PdfError(f"{path.name} has no text layer (scanned images?); OCR it first")
        warnings: list[str] = []
        toc = [entry for entry in doc.get_toc(simple=False) if entry[2] >= 1]
        body = body_size(lines)
        heights = [page.rect.height for page in doc]
        headings = outline_headings(toc, lines, body, heights) if len(toc) >= 3 else []
        outline_used = len(headings) >= 3  # a stub outline (title only, a few figures) is no outline
        if not outline_used:
            headings = rule_headings(lines, body)
        headings = references_heading(lines, headings)
        if not headings:
            warnings.append("no section headings found")
        first_page = [line for line in lines if line.page == 1]
        title = find_title(first_page, doc[0].rect.height, doc.metadata.get("title", "") if doc.metadata else "")
        abstract, marker = find_abstract(lines, headings, body)
        if marker is None:
            warnings.append("no abstract marker found" + ("; used the first body paragraph" if abstract else ""))
        captions, caption_starts = find_captions(lines)
        stamp = _ARXIV_STAMP.search(" ".join(rotated) + " " + " ".join(line_texts[:1]))
        return ParsedPdf(
            title=title,
            abstract=abstract,
            sections=_sections(lines, headings),
            tables=extract_tables(doc, captions, caption_starts, warnings) if detect_tables else [],
            captions=captions,
            environment=find_environment(line_texts),
            page_texts=page_texts,
            page_count=doc.page_count,
            arxiv_id=stamp.group(1) if stamp else None,
            arxiv_version=int(stamp.group(2)) if stamp and stamp.group(2) else None,
            outline_used=outline_used,
            warnings=warnings,
        )
    finally:
        doc.close()

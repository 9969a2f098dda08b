"""`parse_pdf(path) -> ParsedPdf`: the one entry point for turning a paper PDF into structure.

Runs in Celery parse workers, the ingest_pdf command and the benchmark. Django-free on purpose.
Bad files (not a PDF, encrypted, truncated beyond repair, no text layer) raise `PdfError` with a
reason a person can act on; nothing is half-parsed.
"""
from __future__ import annotations

from pathlib import Path

import pymupdf

from ontology.selectors import collapse
from papers.cleaning import clean_text
from papers.pdf.environment import find_environment
from papers.pdf.identifiers import margin_stamp, own_doi
from papers.pdf.inflate import check_inflated_size
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

_MIN_TEXT_CHARS = 200


def _open(path: Path, max_pages: int | None, max_inflated_bytes: int | None) -> pymupdf.Document:
    """The open document, or PdfError. Reasons name no path: callers show them to people who sent the
    file under their own name (an upload's server-side name means nothing to them)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise PdfError(f"the file cannot be read: {exc.strerror or exc}") from exc
    if b"%PDF-" not in head:
        raise PdfError("this is not a PDF (no %PDF- header); check the download URL or file")
    try:
        doc = pymupdf.open(path)
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        detail = str(exc).replace(str(path), "the file")  # MuPDF names the path it was given
        raise PdfError(f"the PDF is corrupt and could not be repaired ({detail}); download it again") from exc
    try:
        if doc.needs_pass or doc.is_encrypted:
            raise PdfError("the PDF is password-protected; supply an unencrypted copy")
        if doc.page_count == 0:
            raise PdfError("the PDF has no pages (truncated download?); download it again")
        if max_pages is not None and doc.page_count > max_pages:
            raise PdfError(f"the PDF has {doc.page_count:,} pages; the limit is {max_pages:,} (PDF_MAX_PAGES)")
        if max_inflated_bytes is not None:
            check_inflated_size(doc, max_inflated_bytes)
    except PdfError:
        doc.close()
        raise
    return doc


def quote_form(page: pymupdf.Page) -> str:
    """A page as facts quote it: its get_text() collapsed and cleaned (ParsedPdf.page_texts)."""
    return clean_text(collapse(page.get_text()))


def page_quote_texts(path: str | Path) -> list[str]:
    """Every page of the PDF at `path` in quote form, without the rest of a parse (seconds, not
    minutes): what a check of shipped quotes against their PDF reads."""
    with pymupdf.open(Path(path)) as doc:
        return [quote_form(page) for page in doc.pages()]


def _all_lines(doc: pymupdf.Document) -> tuple[list[Line], list[str], list[Line], list[str]]:
    """Lines with fonts, each page's lines joined, rotated texts, and each page in quote form.

    The quote form is `page.get_text()` collapsed: the text FACTS_FORMAT.md quotes are exact spans of,
    read here from the same open document so extraction never opens the PDF again.
    """
    lines: list[Line] = []
    line_texts: list[str] = []
    rotated: list[Line] = []
    quote_texts: list[str] = []
    for page in doc:
        try:
            page_part, page_rotated = page_lines(page)
            quote_texts.append(quote_form(page))
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


def parse_pdf(path: str | Path, *, detect_tables: bool = True, max_pages: int | None = None,
              max_inflated_bytes: int | None = None) -> ParsedPdf:
    """Parse one paper: title, abstract, sections with page ranges, tables, captions, environment.

    Table detection is ~90% of the cost; callers that only need text and structure (title,
    abstract, sections) pass detect_tables=False and get `tables == []`. A PDF over `max_pages` or
    whose compressed streams inflate past `max_inflated_bytes` is refused before any page is read
    (papers.pdf.bounded runs this under those caps, a memory cap and a time limit).
    """
    path = Path(path)
    doc = _open(path, max_pages, max_inflated_bytes)
    try:
        lines, line_texts, rotated, page_texts = _all_lines(doc)
        if sum(len(text) for text in line_texts) < _MIN_TEXT_CHARS:
            raise PdfError("the PDF has no text layer (scanned images?); OCR it first")
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
        stamp = margin_stamp(rotated, doc[0].rect.width)
        return ParsedPdf(
            title=title,
            abstract=abstract,
            sections=_sections(lines, headings),
            tables=extract_tables(doc, captions, caption_starts, warnings) if detect_tables else [],
            captions=captions,
            environment=find_environment(line_texts),
            page_texts=page_texts,
            page_count=doc.page_count,
            arxiv_id=stamp[0] if stamp else None,
            arxiv_version=stamp[1] if stamp else None,
            doi=own_doi(doc.get_xml_metadata(), first_page),
            outline_used=outline_used,
            warnings=warnings,
        )
    finally:
        doc.close()

"""The extraction input built from a parse: `extraction_document(parsed) -> PdfDocument`.

Used by `extract_pdf` (nothing stored) and by the pipeline right after a parse, so the ontology's
extraction receives the one reading of the PDF (pages, outline, tables) instead of opening it again.
"""
from __future__ import annotations

from ontology.extraction.text import DocCaption, DocSection, DocTable, PdfDocument
from papers.pdf.model import ParsedPdf


def extraction_document(parsed: ParsedPdf) -> PdfDocument:
    """Page texts, title, abstract, arXiv id, section outline, tables and captions of one parse."""
    return PdfDocument(
        page_texts=list(parsed.page_texts),
        title=parsed.title,
        abstract=parsed.abstract,
        arxiv_id=parsed.arxiv_id,
        sections=[DocSection(s.title, s.page_start, s.page_end) for s in parsed.sections],
        tables=[DocTable(t.page, t.caption, [list(row) for row in t.cells]) for t in parsed.tables],
        captions=[DocCaption(c.kind, c.label, c.page, c.text) for c in parsed.captions],
    )

"""The parse result: plain dataclasses, no Django, so workers, benchmarks and the ontology can share it.

Built once per PDF by `papers.pdf.parse_pdf`; stored by `papers.services.ingest_pdf`, and handed as it
is to the ontology's extraction (which reads it through its own `Document` protocol). A paper whose
parse was stored is rebuilt in this shape from its rows (papers.services.extraction.stored_document);
a bare page-text load is `ParsedPdf.from_pages`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from papers.pdf.table_rows import table_rows


class PdfError(Exception):
    """A PDF that cannot be parsed; `reason` says what a person can do about it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class ParsedSection:
    title: str
    number: str
    level: int
    page_start: int
    page_end: int
    text: str


@dataclass
class ParsedTable:
    page: int
    caption: str
    n_rows: int
    n_cols: int
    cells: list[list[str]]

    def row_sentences(self) -> list[str]:
        """Each data row as a sentence of its header and cells (papers.pdf.table_rows), what the LLM
        extractor reads of a table and what a soup quote is shown as."""
        return [row.sentence for row in table_rows(self.cells, self.page, self.caption)]


@dataclass
class Caption:
    kind: str  # "figure" or "table"
    label: str  # "Figure 3", "Table 1"
    page: int
    text: str


@dataclass
class ParsedPdf:
    """Everything one PDF yields. Pages are 1-based everywhere."""

    title: str
    abstract: str
    sections: list[ParsedSection]
    tables: list[ParsedTable]
    captions: list[Caption]
    environment: dict[str, Any]
    page_texts: list[str]  # quote form: each page's get_text() collapsed, what facts quote
    page_count: int
    arxiv_id: str | None = None  # the PDF's own id: from arXiv's margin stamp only (papers.pdf.identifiers)
    arxiv_version: int | None = None
    doi: str | None = None  # the PDF's own DOI: XMP metadata, or printed as a DOI on page 1 before references
    outline_used: bool = False
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_pages(cls, page_texts: list[str], title: str = "", abstract: str = "") -> ParsedPdf:
        """The shape of a parse for text that comes without an outline (tests, stored page texts alone)."""
        return cls(title=title, abstract=abstract, sections=[], tables=[], captions=[], environment={},
                   page_texts=list(page_texts), page_count=len(page_texts))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

"""Tables and captions. Table detection is the slow part of parsing, so it only runs on pages
whose text has a "Table N" caption; each detected table takes the nearest caption on its page.
"""
from __future__ import annotations

import re
from typing import Any

import pymupdf

from papers.pdf.lines import Line
from papers.pdf.model import Caption, ParsedTable

_CAPTION = re.compile(r"^(Figure|Fig\.|Table|TABLE|FIGURE)\s*([A-Z]?\d{1,2})\s*[:.|]")
_MAX_CAPTION_LINES = 6
_DIGIT = re.compile(r"\d")


def find_captions(lines: list[Line]) -> tuple[list[Caption], list[Line]]:
    """Figure and table captions (with the rest of their block), and the first line of each."""
    captions: list[Caption] = []
    starts: list[Line] = []
    for i, line in enumerate(lines):
        match = _CAPTION.match(line.text)
        if not match:
            continue
        kind = "table" if match.group(1).lower() == "table" else "figure"
        label = f"{'Table' if kind == 'table' else 'Figure'} {match.group(2)}"
        parts = [line.text]
        for nxt in lines[i + 1: i + _MAX_CAPTION_LINES]:
            if nxt.block != line.block or nxt.page != line.page or _CAPTION.match(nxt.text):
                break
            parts.append(nxt.text)
        captions.append(Caption(kind, label, line.page, " ".join(parts)))
        starts.append(line)
    return captions, starts


def _clean(cell: str | None) -> str:
    return " ".join((cell or "").split())


Word = tuple  # PyMuPDF's (x0, y0, x1, y1, text, block_no, line_no, word_no)


def _cell_lines(words: list[Word], bbox: tuple[float, float, float, float] | None) -> list[str]:
    """A cell's text lines as the page's own text layer spaces them (the detector's cell text drops
    spaces between words and splits decimals: "Modelsize", "0 .2s")."""
    if bbox is None:
        return []
    x0, y0, x1, y1 = bbox
    lines: dict[tuple[int, int], list[str]] = {}
    for w in words:
        if x0 <= (w[0] + w[2]) / 2 <= x1 and y0 <= (w[1] + w[3]) / 2 <= y1:
            lines.setdefault((w[5], w[6]), []).append(w[4])
    return [_clean(" ".join(parts)) for _, parts in sorted(lines.items())]


def _table_rows(words: list[Word], table: Any) -> list[list[str]]:
    """The table's rows of cell text. A detected row holding k > 1 lines in each filled cell, and a number on
    every line of one cell (but its first, which may be a header), is k rows the detector merged (no rule
    between them), so it is split back."""
    rows: list[list[str]] = []
    for row in table.rows:
        cells = [_cell_lines(words, bbox) for bbox in row.cells]
        counts = {len(lines) for lines in cells if lines}
        k = counts.pop() if len(counts) == 1 else 1
        if k > 1 and any(lines and all(_DIGIT.search(line) for line in lines[1:]) for lines in cells):
            rows.extend([lines[i] if lines else "" for lines in cells] for i in range(k))
        else:
            rows.append([" ".join(lines) for lines in cells])
    return rows


def extract_tables(doc: pymupdf.Document, captions: list[Caption], starts: list[Line],
                   warnings: list[str]) -> list[ParsedTable]:
    """Detect tables on captioned pages; tables smaller than 2x2 are layout, not data. A page where
    detection fails is skipped with a warning: the text of the paper is still worth having."""
    by_page: dict[int, list[tuple[Caption, Line]]] = {}
    for caption, start in zip(captions, starts, strict=True):
        if caption.kind == "table":
            by_page.setdefault(caption.page, []).append((caption, start))
    tables: list[ParsedTable] = []
    for page_no, page_captions in sorted(by_page.items()):
        try:
            page = doc[page_no - 1]
            found = page.find_tables()
            words = page.get_text("words")
        except (RuntimeError, ValueError, IndexError) as exc:
            warnings.append(f"table detection failed on page {page_no}: {exc}")
            continue
        free = list(page_captions)
        for table in found.tables:
            rows = [row for row in _table_rows(words, table) if any(row)]
            n_cols = max((len(row) for row in rows), default=0)
            if len(rows) < 2 or n_cols < 2:
                continue
            caption = ""
            if free:
                x0, y0, x1, y1 = table.bbox
                nearest = min(free, key=lambda pair: min(abs(pair[1].y0 - y1), abs(pair[1].y1 - y0)))
                caption = nearest[0].text
                free.remove(nearest)
            tables.append(ParsedTable(page_no, caption, len(rows), n_cols, rows))
    return tables

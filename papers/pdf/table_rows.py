"""A table's rows as sentences a person can read: "Table 1 (p. 9), Model size 13B: GPUs A100; Total GPU memory 40 GB".

Runs wherever a table row is shown instead of the page text it was drawn from (search results and
evidence quotes whose text is a run of cells). The header is found by structure, not by paper: the
leading rows whose cells (after the first) hold no values are the header, and a table whose first
column holds the names while its first row already holds values is read column by column.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_VALUE_TOKEN = re.compile(r"[(\[{]?[-–+~∼≈<>]?\d[\d.,]*[%×x]?[A-Za-z]{0,3}[)\]}]?,?|[✓✗✔✘×\-–—]")
_LABEL = re.compile(r"^(?:Table|TABLE)\s*([A-Z]?\d{1,2})")
MAX_HEADER_ROWS = 3


@dataclass(frozen=True)
class TableRow:
    """One row (or, for a table read by columns, one column) of a table: its page, the sentence that
    shows it, and its header/cell pairs."""

    page: int
    sentence: str
    pairs: tuple[tuple[str, str], ...]


def is_value(cell: str) -> bool:
    """True for a cell that states values (mostly numbers, sizes, marks), not names."""
    tokens = cell.split()
    return bool(tokens) and sum(bool(_VALUE_TOKEN.fullmatch(t)) for t in tokens) * 2 >= len(tokens)


def _header_rows(grid: list[list[str]]) -> int:
    """How many leading rows of `grid` are header: at least one, then those with no value cell after the first."""
    count = 1
    while count < min(len(grid) - 1, MAX_HEADER_ROWS) and not any(is_value(c) for c in grid[count][1:]):
        count += 1
    return count


def _by_columns(grid: list[list[str]]) -> bool:
    """A table whose first row already holds values while its first column holds names is read by columns."""
    first_row = [c for c in grid[0][1:] if c]
    first_col = [row[0] for row in grid[1:] if row and row[0]]
    return (bool(first_row) and all(is_value(c) for c in first_row)
            and bool(first_col) and not any(is_value(c) for c in first_col))


def _label(caption: str, page: int) -> str:
    match = _LABEL.match(caption or "")
    return f"Table {match.group(1)} (p. {page})" if match else f"A table (p. {page})"


def table_rows(cells: list[list[str]], page: int, caption: str = "") -> list[TableRow]:
    """Each data row of a table as a sentence built from its header and cells.

    The sentence names the table and its page, then the row's first cell (what the row is about), then
    "header value" for every other filled cell, joined by "; ". A column with no header shows its cell alone.
    """
    width = max((len(row) for row in cells), default=0)
    grid = [[*row, *[""] * (width - len(row))] for row in cells if any(row)]
    if len(grid) < 2 or width < 2:
        return []
    if _by_columns(grid):
        grid = [list(column) for column in zip(*grid, strict=True)]
    n_header = _header_rows(grid)
    headers = [" ".join(row[col] for row in grid[:n_header] if row[col]) for col in range(len(grid[0]))]
    label = _label(caption, page)
    out = []
    for row in grid[n_header:]:
        pairs = tuple((headers[col], cell) for col, cell in enumerate(row) if cell)
        if not pairs or not any(cell for cell in row[1:]):
            continue
        subject = f"{headers[0]} {row[0]}".strip() if row[0] and is_value(row[0]) else row[0]
        rest = "; ".join(f"{head} {cell}".strip() for head, cell in pairs[1 if row[0] else 0:])
        out.append(TableRow(page, f"{label}, {subject}: {rest}" if subject else f"{label}: {rest}", pairs))
    return out

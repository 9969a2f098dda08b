"""Quotes as a person reads them: the one display form of every quote shown (search results, technique
evidence, advisor evidence, the API and the pages).

A stored quote stays verbatim (it is how a fact is checked against its page); what is shown for it is
chosen here. A quote that reads as prose is shown as it is. One that is figure or table text (`is_soup`)
is shown as the table row it came from, as a sentence built from the table's header and cells with the
table's page (papers.pdf.table_rows), when it matches a row of a table on its page; else as the nearest
readable sentence of its page; else it is not shown at all: the item is left out, counted and logged.
The pages and table rows come from the papers app, which registers its reader at start-up
(`use_page_reader`, called from papers/apps.py): papers reads the ontology, so the ontology never imports papers.
"""
from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ontology.extraction.text import is_soup, sentences, without_soup
from ontology.schema import MAX_QUOTE

log = logging.getLogger(__name__)

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
# A quote is a row's when this share of its words are the row's headers and cells.
ROW_MATCH = 0.4


class TableRowLike(Protocol):
    """One table row as the papers app gives it (papers.pdf.table_rows.TableRow)."""

    @property
    def sentence(self) -> str: ...

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]: ...


@dataclass
class QuotedPage:
    """What a quote drawn from one page can be shown as instead: the page's text and its tables' rows."""

    text: str = ""
    rows: Sequence[TableRowLike] = field(default_factory=list)


PageReader = Callable[[Iterable[tuple[int, int]]], dict[tuple[int, int], QuotedPage]]
_page_reader: list[PageReader] = []


def use_page_reader(reader: PageReader) -> None:
    """Read pages and table rows with `reader` ((paper id, page) keys -> QuotedPage); the papers app's."""
    _page_reader[:] = [reader]


def _read_pages(keys: set[tuple[int, int]]) -> dict[tuple[int, int], QuotedPage]:
    if not keys or not _page_reader:
        return {}
    return _page_reader[0](keys)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _cut(text: str, limit: int = MAX_QUOTE) -> str:
    """`text` within `limit` characters, cut after a whole "header value" pair or word."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = max(head.rfind("; "), head.rfind(" "))
    return head[: cut if cut > limit // 2 else limit - 1].rstrip(";, ") + "…"


def _row_sentence(quote: str, source: QuotedPage, value: str | None) -> str | None:
    """The sentence of the table row `quote` was drawn from: of the rows sharing most of its words, the one
    holding the fact's value, else the one sharing the most."""
    words = _words(quote)
    value_words = _words(value or "")
    best: tuple[bool, float] | None = None
    chosen = None
    for row in source.rows:
        if is_soup(row.sentence):
            continue
        row_words = _words(" ".join(f"{head} {cell}" for head, cell in row.pairs))
        share = len(words & row_words) / max(len(words), 1)
        key = (bool(value_words) and value_words <= row_words, share)
        if share >= ROW_MATCH and (best is None or key > best):
            best, chosen = key, row.sentence
    return _cut(chosen) if chosen else None


def _readable(text: str) -> str | None:
    """`text` without its figure and table text, when enough prose is left (None otherwise)."""
    shown = without_soup(text).strip()
    core = shown.strip(" …")
    return shown if len(core) >= 20 and not is_soup(core) else None


def _nearest_sentence(quote: str, text: str, value: str | None) -> str | None:
    """The readable sentence of `text` nearest to where `quote` stands in it (one holding the value first),
    its figure and table text cut out."""
    at = text.find(quote[:40])
    candidates = []
    for sentence in sentences([text]):
        shown = _readable(sentence.original)
        if shown is None:
            continue
        where = text.find(sentence.original)
        distance = abs(where - at) if at >= 0 and where >= 0 else 0
        candidates.append((not (value and value in shown), distance, shown))
    if not candidates:
        return None
    return _cut(min(candidates, key=lambda c: (c[0], c[1]))[2])


def display_quote(quote: str, source: QuotedPage | None = None, value: str | None = None) -> str | None:
    """What to show for `quote`: itself when it holds no figure or table text, else its table row's sentence, else the nearest
    readable sentence of its page (`source`: the page's text and table rows; without it, of the quote
    itself), else None (show nothing)."""
    quote = (quote or "").strip()
    if not quote or not has_soup(quote):
        return quote or None
    return ((_row_sentence(quote, source, value) if source else None)
            or (_nearest_sentence(quote, source.text, value) if source and source.text else None)
            or _nearest_sentence(quote, quote, value))


@functools.lru_cache(maxsize=16384)
def has_soup(text: str) -> bool:
    """True when `text` is soup or holds a run of figure or table text within its prose. Cached: the advisor
    asks it of the same few hundred technique quotes on every request."""
    return is_soup(text) or without_soup(text) != " ".join(text.split())


def readable_text(text: str) -> str | None:
    """A passage or section shown without its figure and table text, or None when too little prose is left."""
    return _readable(text) if has_soup(text) else text


def with_display_quotes(items: list[dict[str, Any]], where: Callable[[dict[str, Any]], tuple[int, int] | None],
                        key: str = "quote") -> list[dict[str, Any]]:
    """`items` with `item[key]` replaced by its display form (`display_quote`); `where(item)` gives the
    (paper id, page) the quote is on. Items with nothing readable to show are left out and counted in the log.
    Reads pages only for quotes that need it (one call of the registered reader)."""
    needs = {loc for item in items if has_soup(item.get(key) or "") and (loc := where(item)) is not None}
    sources = _read_pages(needs)
    out, dropped = [], 0
    for item in items:
        loc = where(item)
        shown = display_quote(item.get(key) or "", sources.get(loc) if loc else None, item.get("value"))
        if shown is None:
            dropped += 1
            continue
        out.append({**item, key: shown} if shown != item.get(key) else item)
    if dropped:
        log.info("left out %d of %d quotes with no readable form", dropped, len(items))
    return out

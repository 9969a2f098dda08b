"""The extraction input (`PdfDocument`) and its sentences, in the form quotes are checked against.

Runs at the start of every extraction. The papers app builds the document from its one parse of a
PDF; page text is PyMuPDF's `page.get_text()` with whitespace collapsed (the form FACTS_FORMAT.md
quotes use). Extractors match patterns on a de-hyphenated copy
("inter- nal" -> "internal") but every quote is cut from the original text through an offset map,
so a quote is always an exact span of the page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ontology.schema import MAX_QUOTE

_HYPHEN_BREAK = re.compile(r"(?<=[a-z])- (?=[a-z])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[“\"])")
_NOT_AN_END = re.compile(r"(?:\be\.g|\bi\.e|\bet al|\bFig|\bFigs|\bEq|\bvs|\bSec|\bTab|\bapprox|\bresp|\bcf|\bNo)\.$")


def collapse(text: str) -> str:
    """Whitespace runs to single spaces, trimmed (the quote form of FACTS_FORMAT.md)."""
    return re.sub(r"\s+", " ", text or "").strip()


@dataclass
class DocSection:
    """One section of the outline: its heading and the 1-based pages it spans."""

    title: str
    page_start: int
    page_end: int


@dataclass
class DocTable:
    """One table: the 1-based page it is on, its caption, and its cells row by row."""

    page: int
    caption: str
    cells: list[list[str]] = field(default_factory=list)


@dataclass
class DocCaption:
    """One figure or table caption as the parse found it: kind, label ("Table 1"), page and text."""

    kind: str
    label: str
    page: int
    text: str


@dataclass
class PdfDocument:
    """What extraction needs from a PDF: page texts in quote form, title/abstract if known, and the
    outline, tables and captions when the papers app has parsed the PDF (empty for a bare page-text load)."""

    page_texts: list[str]
    title: str = ""
    abstract: str = ""
    arxiv_id: str | None = None
    sections: list[DocSection] = field(default_factory=list)
    tables: list[DocTable] = field(default_factory=list)
    captions: list[DocCaption] = field(default_factory=list)


@dataclass
class Sentence:
    """One sentence of a page: `text` is de-hyphenated for matching, `quote_of` maps spans back."""

    page: int
    text: str
    original: str
    offsets: list[int]  # offsets[i] = index in `original` of text[i]

    def quote_of(self, start: int, end: int) -> str:
        """The original text behind text[start:end]."""
        return self.original[self.offsets[start] : self.offsets[end - 1] + 1]

    def quote(self, start: int = 0, end: int | None = None, limit: int = MAX_QUOTE) -> str:
        """The sentence's original text, cut to at most `limit` characters around [start, end)."""
        end = len(self.text) if end is None else end
        if len(self.original) <= limit:
            return self.original
        if end - start >= limit:
            lo, hi = start, start + limit
        else:
            lo = max(0, start - (limit - (end - start)) // 2)
            hi = min(len(self.text), lo + limit)
            lo = max(0, hi - limit)
        while 0 < lo < start and self.text[lo - 1] != " ":
            lo += 1
        while end < hi < len(self.text) and self.text[hi] != " ":
            hi -= 1
        return self.quote_of(lo, hi).strip()[:limit]


_NUMERIC_TOKEN = re.compile(r"[(\[]?[-–+]?[\d.]+[%×x)\]]?[A-Za-z]{0,2}|[-–]")


def is_soup(text: str) -> bool:
    """True for text drawn from figures and table cells (axis ticks, legends, cell runs): four or more
    bare numbers in a row, or mostly numbers. Such text never becomes a quote; "32, 64 and 128" in
    prose is a list (commas and words between the numbers), not soup."""
    tokens = text.split()
    run = longest = numeric = 0
    for token in tokens:
        if _NUMERIC_TOKEN.fullmatch(token):
            run, numeric = run + 1, numeric + 1
            longest = max(longest, run)
        else:
            run = 0
    return longest >= 4 or (len(tokens) >= 10 and numeric / len(tokens) > 0.35)


def readable_quote(sentence: Sentence, start: int, end: int) -> str | None:
    """The sentence's quote around [start, end), narrowed until it holds no figure or table text;
    None when even the few words around the match are soup."""
    for limit in (MAX_QUOTE, 160, 90, 50, 32):
        quote = sentence.quote(start, end, limit=limit)
        if not is_soup(quote):
            return quote
    return None


def _dehyphenate(text: str) -> tuple[str, list[int]]:
    out: list[str] = []
    offsets: list[int] = []
    last = 0
    for match in _HYPHEN_BREAK.finditer(text):
        out.append(text[last : match.start()])
        offsets.extend(range(last, match.start()))
        last = match.end()
    out.append(text[last:])
    offsets.extend(range(last, len(text)))
    return "".join(out), offsets


def sentences(page_texts: list[str]) -> list[Sentence]:
    """Split every page into sentences (table rows come out as long runs; quotes are cut short)."""
    result: list[Sentence] = []
    for number, page_text in enumerate(page_texts, start=1):
        start = 0
        pieces: list[tuple[int, int]] = []
        for match in _SENTENCE_END.finditer(page_text):
            if _NOT_AN_END.search(page_text[max(0, match.start() - 8) : match.start()]):
                continue
            pieces.append((start, match.start()))
            start = match.end()
        pieces.append((start, len(page_text)))
        for lo, hi in pieces:
            original = page_text[lo:hi]
            if len(original.strip()) < 8:
                continue
            text, offsets = _dehyphenate(original)
            result.append(Sentence(page=number, text=text, original=original, offsets=offsets))
    return result

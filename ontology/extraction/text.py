"""The extraction input (`Document`, the fields of a parse it reads) and its sentences, in the form
quotes are checked against.

Runs at the start of every extraction. The papers app hands over its one parse of a PDF (or one
rebuilt from what the parse stored); page text is PyMuPDF's `page.get_text()` with whitespace collapsed (the form FACTS_FORMAT.md
quotes use). Extractors match patterns on a de-hyphenated copy
("inter- nal" -> "internal") but every quote is cut from the original text through an offset map,
so a quote is always an exact span of the page.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ontology.schema import MAX_QUOTE

_HYPHEN_BREAK = re.compile(r"(?<=[a-z])- (?=[a-z])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[“\"])")
_NOT_AN_END = re.compile(r"(?:\be\.g|\bi\.e|\bet al|\bFig|\bFigs|\bEq|\bvs|\bSec|\bTab|\bapprox|\bresp|\bcf|\bNo)\.$")


def collapse(text: str) -> str:
    """Whitespace runs to single spaces, trimmed (the quote form of FACTS_FORMAT.md)."""
    return re.sub(r"\s+", " ", text or "").strip()


class DocumentSection(Protocol):
    """One section of the outline: its heading, the 1-based pages it spans, and its text."""

    @property
    def title(self) -> str: ...
    @property
    def page_start(self) -> int: ...
    @property
    def page_end(self) -> int: ...
    @property
    def text(self) -> str: ...


class DocumentTable(Protocol):
    """One table: the 1-based page it is on, its caption, its cells row by row, and its data rows as
    sentences of header and cells (built by the papers app, which parses tables)."""

    @property
    def page(self) -> int: ...
    @property
    def caption(self) -> str: ...
    @property
    def cells(self) -> list[list[str]]: ...
    def row_sentences(self) -> list[str]: ...


class DocumentCaption(Protocol):
    """One figure or table caption: kind ("figure"/"table"), label ("Table 1"), page, text."""

    @property
    def kind(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def page(self) -> int: ...
    @property
    def text(self) -> str: ...


class Document(Protocol):
    """What extraction reads from a parsed PDF: page texts in quote form, title and abstract, the
    arXiv id if the PDF carries one, and the outline, tables and captions (empty for a bare page-text
    load). The papers app's parse result (`ParsedPdf`) is the one shape that satisfies it; the
    ontology names only the fields it reads, so it does not import the papers app."""

    @property
    def page_texts(self) -> list[str]: ...
    @property
    def title(self) -> str: ...
    @property
    def abstract(self) -> str: ...
    @property
    def arxiv_id(self) -> str | None: ...
    @property
    def sections(self) -> Sequence[DocumentSection]: ...
    @property
    def tables(self) -> Sequence[DocumentTable]: ...
    @property
    def captions(self) -> Sequence[DocumentCaption]: ...


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


_NUMERIC_TOKEN = re.compile(r"[(\[]?[-–+~∼]?[\d.]+[%×x)\]]?[A-Za-z]{0,2}|[-–✓✗✔✘]")
# Words no sentence of prose goes long without; a run of cells and labels has none of them.
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "of", "to", "in", "on", "for", "with", "and", "or", "is", "are", "was", "were", "be", "been",
    "by", "we", "our", "this", "that", "these", "as", "at", "from", "it", "its", "than", "which", "can", "not", "has",
    "have", "when", "while", "across", "per", "using", "via", "into", "between", "over", "under", "up", "only"))


_RELATIONS = frozenset(("=", "≈", "<", ">", "≤", "≥"))


def is_soup(text: str) -> bool:
    """True for text drawn from figures and table cells (axis ticks, legends, cell runs): four or more
    bare numbers or marks (✓ ✗ -) in a row, mostly numbers, or eight or more words holding four numbers
    and not one function word or , ; : ("Model size 13B 66B 175B GPUs A100 Total GPU memory 40 GB"). Such text is
    never shown as a quote; "32, 64 and 128" in prose is a list (commas and words between the numbers), not soup."""
    tokens = text.split()
    run = longest = numeric = 0
    for token in tokens:
        if _NUMERIC_TOKEN.fullmatch(token):
            run, numeric = run + 1, numeric + 1
            longest = max(longest, run)
        else:
            run = 0
    if longest >= 4 or (len(tokens) >= 10 and numeric / len(tokens) > 0.35):
        return True
    return len(tokens) >= 8 and numeric >= 4 and not any(_joins(t) for t in tokens)


def _joins(token: str) -> bool:
    """A function word, a relation (= ≈ < >: an equation is a statement), or a word ending in , ; or :
    (what joins the parts of a sentence or a list)."""
    return token[-1] in ",;:" or token in _RELATIONS or token.lower().strip(".()") in _FUNCTION_WORDS


LEAD_WORDS = 3


def without_soup(text: str) -> str:
    """`text` with its figure and table text cut out, each cut marked "…": a run of words with no function word
    and no , ; : full stop or earlier cut between them that is soup by itself ("… 160 GB We run" keeps "We run"). For display only;
    the result is no longer a span of the page."""
    kept: list[str] = []
    run: list[str] = []
    for token in [*text.split(), ""]:
        if token and not _joins(token) and not token.endswith((".", "…")):
            run.append(token)
            continue
        if len(run) >= 4 and is_soup(" ".join(run)):
            # up to LEAD_WORDS words leading into the soup stay ("blocks of 16 tokens 0 50 100" keeps "16 tokens")
            for _ in range(LEAD_WORDS):
                if _NUMERIC_TOKEN.fullmatch(run[0]) and _NUMERIC_TOKEN.fullmatch(run[1]) or not is_soup(" ".join(run[1:])):
                    break
                kept.append(run.pop(0))
            if not kept or kept[-1] != "…":
                kept.append("…")
        else:
            kept += run
        run = []
        if token:
            kept.append(token)
    return " ".join(kept)


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

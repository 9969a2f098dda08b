"""Candidate passages for the LLM extractor: the few places of a paper most likely to state a fact.

Runs once per extraction with an LLM, before any call. Candidates are sentences of the setup and
evaluation sections, figure and table captions, footnotes, and table rows turned into sentences
("Table 2 (p. 7), OPT-13B: GPUs 1", built by the papers app) so the model reads a row with its header. Every candidate
gets one generic score (numbers with units, vocabulary knobs, setup and trade-off cue words, the kind
of place it comes from) and the best `limit` are kept in page order; no rule names a paper. Prose
passages are exact spans of the page text, so a quote the model copies from them can be grounded.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ontology.extraction.text import Document, DocumentSection, Sentence, collapse, is_soup
from ontology.vocabulary import parameters_mentioned

# Section titles whose sentences describe what was run and measured.
SETUP_SECTION = re.compile(r"setup|experiment|evaluat|implementation|methodology|configuration|hardware|"
                           r"benchmark|environment|results|ablation|discussion|limitation", re.I)
END_MATTER = re.compile(r"^\s*(?:\d+\s*)?(?:references|bibliography|acknowledg)", re.I)
_QUANTITY = re.compile(r"\d[\d,.]*\s?(?:%|×|x\b|GB|GiB|MB|TB|GPUs?|ms|s\b|seconds|tokens|threads|requests|"
                       r"rps|QPS|B\b|K\b|M\b|bits?|cores|nodes|layers|heads)", re.I)
_CUES = re.compile(r"\b(?:we use|we set|set to|default|configur|equipped|run on|deploy|evaluate|batch size|"
                   r"trade-?off|at the cost|at the expense|overhead|however|whereas|while|but|increases?|"
                   r"decreases?|reduces?|improves?|version|up to)\b", re.I)
_FOOTNOTE = re.compile(r"^(?:\d{1,2}|[*†‡§])\s?[A-Z]")
MIN_CHARS, MAX_CHARS = 40, 420
# Prose is mostly lower-case words; table text flattened into a "sentence" ("Model size 13B 66B GPUs A100
# 4×A100 …") is not, though is_soup lets it pass when letters are glued to its numbers.
MIN_WORD_SHARE = 0.45


def reads_as_prose(text: str) -> bool:
    """True when at least MIN_WORD_SHARE of the tokens are lower-case words."""
    tokens = text.split()
    return bool(tokens) and sum(t.strip(",.;:()").isalpha() and t.islower() for t in tokens) / len(tokens) >= MIN_WORD_SHARE


@dataclass(frozen=True)
class Passage:
    """One text the model reads: the 1-based page, where it comes from, and its score."""

    page: int
    source: str  # "section", "prose", "caption", "footnote" or "table"
    text: str
    score: float


def score_text(text: str) -> float:
    """The generic worth of a passage: stated quantities, knobs the vocabulary knows, setup/trade-off cues."""
    return (2.0 * min(3, len(_QUANTITY.findall(text))) + 1.5 * min(2, len(parameters_mentioned(text)))
            + 1.0 * min(2, len(_CUES.findall(text))))


def _setup_pages(sections: Sequence[DocumentSection]) -> set[int]:
    return {page for s in sections if SETUP_SECTION.search(s.title) and not END_MATTER.search(s.title)
            for page in range(s.page_start, s.page_end + 1)}


def _end_matter_page(sections: Sequence[DocumentSection], pages: int) -> int:
    """The first page of the references (or the page count when the outline has none)."""
    return min((s.page_start for s in sections if END_MATTER.search(s.title)), default=pages + 1)


def candidate_passages(document: Document, units: list[Sentence]) -> list[Passage]:
    """Every scored candidate of the document (before the per-paper bound)."""
    setup = _setup_pages(document.sections)
    last = _end_matter_page(document.sections, len(document.page_texts))
    found: list[Passage] = []
    for sentence in units:
        text = collapse(sentence.original)
        if (sentence.page >= last or not MIN_CHARS <= len(text) <= MAX_CHARS or is_soup(text)
                or not reads_as_prose(text)):
            continue
        if re.match(r"(?:fig(?:ure)?|table)\.?\s*\d", text, re.I):
            continue  # captions come from the parse's caption list below
        source = ("footnote" if _FOOTNOTE.match(text) and "http" not in text
                  else "section" if sentence.page in setup else "prose")
        bonus = {"section": 2.0, "footnote": 1.0, "prose": 0.0}[source]
        found.append(Passage(sentence.page, source, text, score_text(text) + bonus))
    for caption in document.captions:
        text = collapse(caption.text)[:MAX_CHARS]
        if caption.page < last and len(text) >= MIN_CHARS:
            found.append(Passage(caption.page, "caption", text, score_text(text) + 1.0))
    for table in document.tables:
        if table.page >= last:
            continue
        for sentence_of_row in table.row_sentences():
            text = sentence_of_row[:MAX_CHARS]
            if not is_soup(text):  # a row the parse merged into ticks and crosses reads as nothing
                found.append(Passage(table.page, "table", text, score_text(text)))
    return [p for p in found if p.score > 0]


def select_passages(document: Document, units: list[Sentence], limit: int, max_table_rows: int = 2) -> list[Passage]:
    """The `limit` best candidates (at most `max_table_rows` of them table rows), in page order; ties go
    to the earlier passage. Duplicated texts count once."""
    ranked = sorted(enumerate(candidate_passages(document, units)), key=lambda item: (-item[1].score, item[0]))
    chosen: list[tuple[int, Passage]] = []
    seen: set[str] = set()
    rows = 0
    for index, passage in ranked:
        if len(chosen) >= limit:
            break
        key = passage.text.lower()
        if key in seen or (passage.source == "table" and rows >= max_table_rows):
            continue
        seen.add(key)
        rows += passage.source == "table"
        chosen.append((index, passage))
    return [passage for _, passage in sorted(chosen, key=lambda item: (item[1].page, item[0]))]

"""Grounding and merging: the last steps before any extracted fact is reported or stored.

Runs on every extractor's output. A fact is kept only if its quote is an exact span of a page
(whitespace collapsed, case-insensitive; its page is corrected to where the quote is), reads as
prose rather than figure or table text, and its stated value occurs in the quote. Facts that several
extractors found are merged into one, which keeps every extractor's name, the highest confidence and
the best quote (`better_quote`).
"""
from __future__ import annotations

import re

from ontology.extraction.text import collapse, is_soup
from ontology.units import format_number, parse_value


def _norm(text: str | None) -> str:
    return collapse(text or "").lower()


def value_in_quote(value: str | None, quote: str) -> bool:
    """True when the stated value (or its number) is written in the quote."""
    if value in (None, ""):
        return True
    needle, haystack = _norm(value), _norm(quote)
    if needle in haystack:
        return True
    parsed = parse_value(value)
    return parsed.num is not None and re.search(rf"(?<![\d.]){re.escape(format_number(parsed.num))}(?![\d])", haystack)


def ground(facts: list[dict], page_texts: list[str]) -> tuple[list[dict], list[tuple[dict, str]]]:
    """(kept facts, [(dropped fact, reason)]); kept facts get the page their quote is on."""
    pages = [_norm(text) for text in page_texts]
    kept: list[dict] = []
    dropped: list[tuple[dict, str]] = []
    for fact in facts:
        quote = _norm(fact.get("quote"))
        if len(quote) < 3:
            dropped.append((fact, "no quote"))
            continue
        if is_soup(fact["quote"]):
            dropped.append((fact, "quote is figure or table text"))
            continue
        claimed = fact.get("page")
        order = ([claimed - 1] if isinstance(claimed, int) and 0 < claimed <= len(pages) else []) + list(range(len(pages)))
        page = next((index + 1 for index in order if quote in pages[index]), None)
        if page is None:
            dropped.append((fact, "quote is not in the PDF text"))
            continue
        if not value_in_quote(fact.get("value"), fact["quote"]):
            dropped.append((fact, f"value {fact.get('value')!r} is not in the quote"))
            continue
        kept.append({**fact, "page": page})
    return kept, dropped


def merge_key(fact: dict) -> tuple:
    """Facts with the same key say the same thing: kind, parameter, value (as a number if any), page."""
    parsed = parse_value(fact.get("value"), fact.get("unit"))
    value = format_number(parsed.num) if parsed.num is not None else _norm(fact.get("value"))
    if fact["kind"] == "trade_off":
        value = ""
    return fact["kind"], fact["parameter"], value, fact.get("page")


# A quote shorter than this rarely says what the number is of ("40 GB"), so it never wins on length.
MIN_TELLING_QUOTE = 24


def better_quote(kept: str, other: str) -> bool:
    """True when `other` is the better of two grounded quotes for the same fact: the shorter span that
    still says what the value is of (FACTS_FORMAT asks for the shortest span stating the fact)."""
    return MIN_TELLING_QUOTE <= len(other) < len(kept)


def merge(facts: list[dict]) -> list[dict]:
    """One fact per merge key; extractors joined ('llm+rules').

    The most confident fact's fields win, and its confidence rises by 0.1 (at most 1.0) for each
    other fact merged into it: agreement is evidence. An LLM-written effect or condition fills a
    rule fact's, and the better quote of the two is kept (with its page).
    """
    merged: dict[tuple, dict] = {}
    for fact in sorted(facts, key=lambda f: -f.get("confidence", 0.0)):
        key = merge_key(fact)
        if key not in merged:
            merged[key] = dict(fact)
            continue
        into = merged[key]
        names = set(into["extractor"].split("+")) | set(fact["extractor"].split("+"))
        into["extractor"] = "+".join(sorted(names))
        into["confidence"] = round(min(1.0, into["confidence"] + 0.1), 3)
        for field in ("condition", "effect"):
            if fact.get(field) and (not into.get(field) or fact["extractor"] == "llm"):
                into[field] = fact[field]
        if better_quote(into["quote"], fact["quote"]):
            into["quote"], into["page"] = fact["quote"], fact["page"]
    return list(merged.values())

"""Quantities an error compares, and the engine flags that set them: "max_num_seqs (1024) exceeds available Mamba
cache blocks (95)" lowers the sequences and raises the memory that holds the blocks, whoever wrote the message.

Runs on every diagnose request, after the failure catalog and the fixes a message names itself. Engines phrase
their limits as a comparison between two quantities — a configured one (context length, concurrent sequences,
batched or prefill tokens) and what it needs (cache blocks the memory fraction buys) — so reading the
comparison answers messages no signature was written for. The words of each quantity and the flags that set
it, per engine, are data (advisor/catalog/quantities.json, validated on load: every flag a key of its engine
profile, every entry citing the help text or error string it comes from). Directions:

- "A exceeds / is longer (larger, greater, more) than B": lower A's flag, raise B's;
- "A is smaller (shorter, less, fewer) than B": raise A's flag, lower B's;
- "not enough / insufficient / no available B", B right after those words: raise B's flag;
- and where B is a supply with consumers (cache blocks are held by each running sequence and its context)
  and the text names no A — a message quoted with its subject cut off — lower the consumers' flags too.

A comparison counts only when a number stands in it, as engines print them ("(95)", "of 12288"): a sentence
such as "the prompt is longer than the context" describes a symptom and is left to the literature.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from advisor import remedies
from advisor.error_text import Recognised
from advisor.profiles import Fact, Pattern, profile, profiles

QUANTITIES_FILE = Path(__file__).resolve().parent / "catalog" / "quantities.json"
# How far a quantity may stand from the comparison word: "max_num_seqs (1024) exceeds", "exceeds the available
# Mamba cache blocks", "is longer than the maximum model length of".
_REACH = 40
_BIGGER = r"exceed(?:s|ed|ing)?|(?:is|are|was|were) (?:longer|larger|greater|bigger|more|higher) than|(?:is|are) over\b|(?<=\s)>=?(?=\s)"
_SMALLER = r"(?:is|are|was|were) (?:smaller|shorter|less|fewer|lower) than|(?<=\s)<=?(?=\s)"
_SCARCE = r"not enough|insufficient|no (?:available|free)|ran out of|out of"
_COMPARISON = re.compile(rf"(?P<bigger>{_BIGGER})|(?P<smaller>{_SMALLER})|(?P<scarce>{_SCARCE})", re.IGNORECASE)
_BOUNDARY = re.compile(r"[.!?;](?:\s|$)|\n")


class QuantityError(ValueError):
    """quantities.json does not validate: names the entry and the field."""


class Quantity(BaseModel):
    """One quantity: the words errors use for it, the flags (profile keys) per engine that set it, and — for a
    supply such as cache blocks — the quantities that consume it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9-]{1,40}$")
    words: list[Pattern] = Field(min_length=1)
    knobs: dict[str, list[str]] = Field(min_length=1)
    consumers: list[str] = Field(default_factory=list)
    sources: list[Fact] = Field(min_length=1)


class QuantityFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str = Field(min_length=10)
    quantities: list[Quantity] = Field(min_length=1)

    @model_validator(mode="after")
    def _consumers_known(self) -> QuantityFile:
        ids = [q.id for q in self.quantities]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate quantity ids: {ids}")
        unknown = sorted({c for q in self.quantities for c in q.consumers} - set(ids))
        if unknown:
            raise ValueError(f"consumers name unknown quantities: {unknown}")
        return self


def load_file(path: Path) -> QuantityFile:
    """Parse and validate the quantity file; every knob must be a flag key of its engine's profile."""
    try:
        data = QuantityFile.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise QuantityError(f"{path.name}: {exc}") from exc
    known = profiles()
    for q in data.quantities:
        for engine, keys in q.knobs.items():
            if engine not in known:
                raise QuantityError(f"{path.name}: {q.id}: unknown engine {engine!r}")
            missing = sorted(set(keys) - set(known[engine].flags))
            if missing:
                raise QuantityError(f"{path.name}: {q.id}: {engine} profile has no flag keys {missing}")
    return data


@cache
def quantities() -> dict[str, Quantity]:
    """Every quantity by id."""
    return {q.id: q for q in load_file(QUANTITIES_FILE).quantities}


@dataclass(frozen=True)
class Mention:
    """Where the text names a quantity."""

    quantity: Quantity
    start: int
    end: int


@dataclass(frozen=True)
class Change:
    """A flag to move: the quantity it sets, the direction, and the comparison that says so."""

    quantity: Quantity
    direction: str
    said: str


def _mentions(text: str) -> list[Mention]:
    out = []
    for q in quantities().values():
        for pattern in q.words:
            out += [Mention(q, m.start(), m.end()) for m in re.finditer(pattern, text, re.IGNORECASE)]
    # the longest mention of a span wins ("max_num_seqs" over "num seqs")
    out.sort(key=lambda m: (m.start, -(m.end - m.start)))
    kept: list[Mention] = []
    for m in out:
        if not kept or m.start >= kept[-1].end:
            kept.append(m)
    return kept


def _clause(text: str, start: int, end: int) -> bool:
    """No sentence boundary between the two positions."""
    return not _BOUNDARY.search(text, start, end)


def changes(text: str) -> list[Change]:
    """The flags the comparisons of the text move, in the order the text states them, each (quantity, direction)
    once."""
    mentions = _mentions(text)
    out: list[Change] = []
    for cmp in _COMPARISON.finditer(text):
        before = [m for m in mentions if cmp.start() - _REACH <= m.end <= cmp.start() and _clause(text, m.end, cmp.start())]
        after = [m for m in mentions if cmp.end() <= m.start <= cmp.end() + _REACH and _clause(text, cmp.end(), m.start)]
        left, right = (before[-1] if before else None), (after[0] if after else None)
        if cmp.group("scarce") and right is not None and not re.fullmatch(
                r"\s*(?:the\s+)?(?:available\s+|free\s+)?", text[cmp.end():right.start]):
            # "not enough memory to handle 4096 prefill tokens": what is short is the memory, not the tokens
            continue
        # a quantity compared with itself ("User-specified max_model_len (4096) is greater than the derived
        # max_model_len") says which value wins, not which way to move the flag: the catalog answers that one
        if right is None or (left is not None and left.quantity.id == right.quantity.id):
            continue
        span = text[(left.start if left else cmp.start()):right.end + 20]
        if not re.search(r"\d", span):
            continue
        said = " ".join(span.split())
        found: list[tuple[Quantity, str]] = []
        if cmp.group("bigger"):
            if left is not None and not left.quantity.consumers:
                found.append((left.quantity, "lower"))
            found.append((right.quantity, "raise"))
            if left is None:
                found += [(quantities()[c], "lower") for c in right.quantity.consumers]
        elif cmp.group("smaller"):
            if left is not None:
                found.append((left.quantity, "raise"))
            if not right.quantity.consumers:
                found.append((right.quantity, "lower"))
        else:
            found.append((right.quantity, "raise"))
            found += [(quantities()[c], "lower") for c in right.quantity.consumers]
        for quantity, direction in found:
            if not any(c.quantity.id == quantity.id and c.direction == direction for c in out):
                out.append(Change(quantity, direction, said))
    return out


def actions(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """The changes as diagnose actions for the recognised engine (every engine that has the flag when none is),
    spelt as the text's release spells each flag."""
    out: list[dict[str, Any]] = []
    for change in changes(text):
        engines = [rec.engine] if rec.engine is not None else list(change.quantity.knobs)
        for engine in engines:
            eng = profile(engine)
            version = rec.version if rec.engine == engine else None
            for key in change.quantity.knobs.get(engine, []):
                spelling = remedies.spelling_at(eng, key, version)
                if spelling is None:
                    continue
                flag = eng.spelt_as(key, rec.options) or spelling[0]
                out.append({"engine": engine, "flag": flag, "since": spelling[1], "direction": change.direction,
                            "value": None, "arithmetic": None,
                            "why": f"The message compares quantities (\u201c{change.said}\u201d); {flag} sets "
                                   f"{change.quantity.id.replace('-', ' ')}, so {change.direction} it.",
                            "source": change.quantity.sources[0].source, "aliases": eng.other_spellings(key, flag)})
    return out

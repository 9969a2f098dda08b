"""Serving techniques: the vocabulary (ontology/data/techniques.json) and which techniques a fact is about.

Loaded once per process and validated on load (unknown keys, an unknown parameter name or an empty
word list are load errors). Every store of extracted facts links them here (ontology.services.link_facts);
the advisor, diagnose and the wiki read technique names from `technique_names()` only, so one file
holds the list. Matching is generic: a fact belongs to a technique when its text uses one of the
technique's words or it states one of the technique's parameters — never by which paper it came from.
"""
from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ontology.vocabulary import canonical_parameter, parameter_specs

DATA_FILE = Path(__file__).resolve().parent / "data" / "techniques.json"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# A paper "evaluates" a technique when this many of its facts use the technique's own words;
# a single passing mention (related work) is not evidence of what the technique does.
EVALUATES_MIN_FACTS = 2
# A paper "introduces" a technique when it evaluates it and one of those facts presents it as its own.
_INTRODUCES = re.compile(r"\b(?:we|this (?:paper|work)|our (?:system|approach|design))\s+(?:first\s+)?"
                         r"(?:propose|introduce|present|design|develop|build|leverage)s?\b|\bnovel\b", re.IGNORECASE)


def paper_role(quotes_naming_it: list[str]) -> str:
    """"introduces", "evaluates" or "mentions": what a paper does with a technique, from the quotes of
    its facts that use the technique's own words."""
    if len(quotes_naming_it) < EVALUATES_MIN_FACTS:
        return "mentions"
    return "introduces" if any(_INTRODUCES.search(q) for q in quotes_naming_it) else "evaluates"


class TechniqueSpec(BaseModel):
    """One serving technique: what it is, the words papers use for it, its parameters, the symptoms it treats."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str = Field(min_length=3, max_length=80)
    description: str = Field(min_length=20, max_length=600)
    words: tuple[str, ...] = Field(min_length=1)
    parameters: tuple[str, ...] = ()
    symptoms: tuple[str, ...] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _snake_case(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"technique name {value!r} is not snake_case")
        return value

    @field_validator("words", "symptoms")
    @classmethod
    def _lower(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = tuple(v.strip().lower() for v in values)
        if any(len(v) < 3 for v in cleaned):
            raise ValueError("every word and symptom needs at least 3 characters")
        return cleaned

    @field_validator("parameters")
    @classmethod
    def _known_parameters(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [v for v in values if canonical_parameter(v) not in parameter_specs()]
        if unknown:
            raise ValueError(f"parameters not in ontology/data/parameters.json: {unknown}")
        return tuple(canonical_parameter(v) for v in values)


class TechniqueVocabularyError(ValueError):
    """techniques.json does not match its schema; the message names the technique and field."""


def load_techniques(path: Path = DATA_FILE) -> dict[str, TechniqueSpec]:
    """Parse and validate a techniques file (raises TechniqueVocabularyError naming what is wrong)."""
    raw = json.loads(path.read_text())
    specs: dict[str, TechniqueSpec] = {}
    for name, body in raw.items():
        try:
            specs[name] = TechniqueSpec(name=name, **body)
        except (TypeError, ValueError) as exc:
            raise TechniqueVocabularyError(f"{path.name}: technique {name!r}: {exc}") from exc
    return specs


@cache
def techniques() -> dict[str, TechniqueSpec]:
    """Every technique of the bundled vocabulary, by name."""
    return load_techniques()


def technique_names() -> list[str]:
    """The technique names, in the vocabulary's order (the one list other apps read)."""
    return list(techniques())


def _word_pattern(word: str) -> str:
    # "chunked prefill" also matches "chunked-prefill" and line-broken "chunked\nprefill"
    parts = [re.escape(p) for p in re.split(r"[\s\-]+", word) if p]
    return r"(?<![a-z0-9])" + r"[\s\-]*".join(parts) + r"(?![a-z0-9])"


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return {name: re.compile("|".join(_word_pattern(w) for w in sorted(spec.words, key=len, reverse=True)),
                             re.IGNORECASE)
            for name, spec in techniques().items()}


def techniques_in_text(text: str) -> list[str]:
    """Techniques whose words occur in `text`, in vocabulary order."""
    text = text or ""
    return [name for name, pattern in _patterns().items() if pattern.search(text)]


@lru_cache(maxsize=65536)
def names_technique(name: str, text: str) -> bool:
    """True when `text` uses the words of technique `name`: `name in techniques_in_text(text)` with one
    pattern, not the whole vocabulary. Cached: the advisor asks it of every linked fact on every request."""
    pattern = _patterns().get(name)
    return bool(pattern and pattern.search(text or ""))


def techniques_for_fact(fact: dict[str, Any]) -> list[str]:
    """The techniques one fact (a dict with subject, parameter, quote, condition, effect) is about."""
    parameter = canonical_parameter(fact.get("parameter") or "")
    text = " ".join(str(fact.get(k) or "") for k in ("subject", "quote", "condition", "effect"))
    found = set(techniques_in_text(text))
    found |= {name for name, spec in techniques().items() if parameter in spec.parameters}
    return [name for name in techniques() if name in found]

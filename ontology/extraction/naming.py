"""Names for the quantities a paper states, meeting the parameter vocabulary halfway.

Runs for every generic statement ("the query tile size is 16", "reduces the KV cache by 93%")
whose noun phrase no rule already named. In order: a catalogue phrase or synonym in the phrase
(ontology.vocabulary), else the nearest catalogue entry by sentence embedding when it is close
enough, else a snake_case name coined from the phrase itself. Coined names are reported as new so a
person can merge them into the vocabulary later.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from ontology.vocabulary import canonical_parameter, parameter_specs, parameters_mentioned, spec_for

# Cosine similarity (MiniLM, unit vectors) above which a phrase is taken to mean a catalogue entry.
# Measured on the development papers: paraphrases of one knob score 0.8-0.95, different knobs that
# share a head noun ("query tile size" / "block size") 0.55-0.75.
EMBEDDING_THRESHOLD = 0.82

_DROP = {"a", "an", "the", "of", "our", "its", "their", "this", "that", "these", "each", "every", "all",
         "we", "to", "for", "in", "on", "with", "and", "or", "by", "is", "are", "be", "used", "use",
         "total", "overall", "average", "default", "typical", "commonly", "maximum", "minimum",
         "where", "while", "when", "which", "whereas", "also", "further", "significantly", "greatly", "then"}
# Standard abbreviations of serving metrics, spelled out the way parameter names spell them.
ABBREVIATIONS = {"itl": "inter_token_latency", "tbt": "time_between_tokens", "e2e": "end_to_end",
                 "kv": "kv", "qps": "qps", "rps": "requests_per_second"}


@dataclass(frozen=True)
class Name:
    """A parameter name and how it was found: 'vocabulary', 'embedding' or 'coined'."""

    parameter: str
    how: str


def snake(phrase: str) -> str:
    """'Query tile-size' -> 'query_tile_size'; articles and filler words dropped, abbreviations spelled out."""
    words: list[str] = []
    for token in phrase.lower().split():
        parts = re.findall(r"[a-z0-9]+", token)
        # a hyphenated compound keeps its inner words ("end-to-end" -> end_to_end)
        words += parts if "-" in token and len(parts) > 1 else [w for w in parts if w not in _DROP]
    words = [ABBREVIATIONS.get(w, w) for w in words]
    return "_".join(words)[:60].strip("_")


@cache
def _catalogue() -> tuple[list[str], np.ndarray]:
    from ontology.embeddings import embed

    names = sorted(parameter_specs())
    texts = [name.replace("_", " ") + "; " + "; ".join(p for p in parameter_specs()[name].phrases
                                                       if not p.startswith("re:"))[:200] for name in names]
    return names, embed(texts)


def nearest_catalogue_entry(phrase: str) -> tuple[str, float]:
    """The catalogue parameter closest in meaning to the phrase, and its cosine similarity."""
    from ontology.embeddings import embed_one

    names, vectors = _catalogue()
    scores = vectors @ embed_one(phrase)
    best = int(np.argmax(scores))
    return names[best], float(scores[best])


_RESULT = re.compile(r"_(?:speedup|pct|reduction|improvement|gain|increase|saving)$")


def _is_result(name: str, phrase: str) -> bool:
    """True when the catalogue name is a result (a speedup or change) that the phrase does not speak of:
    "request rate" is a knob or workload, not request_rate_speedup."""
    found = _RESULT.search(name)
    return found is not None and found.group()[1:4] not in phrase.lower()


@lru_cache(maxsize=4096)
def name_quantity(phrase: str, suffix: str = "", use_embedding: bool = True) -> Name | None:
    """A parameter name for the noun phrase a value is stated for; `suffix` ('_pct', '_gb', '_version')
    is what kind of number it is, and only catalogue entries with that suffix (or none) can match."""
    phrase = re.sub(r"\s+", " ", phrase).strip()
    coined = snake(phrase)
    if not coined:
        return None
    # "cache hit rate" + "_pct": the catalogue may know the name with or without the suffix.
    candidates = [coined + suffix, coined] if suffix and not coined.endswith(suffix) else [coined]
    for candidate in candidates:
        if spec_for(candidate) is not None or canonical_parameter(candidate) != candidate:
            return Name(canonical_parameter(candidate), "vocabulary")
    if not suffix:
        mentioned = [name for name in parameters_mentioned(phrase) if spec_for(name)]
        if len(mentioned) == 1 and len(phrase.split()) <= 3:
            return Name(mentioned[0], "vocabulary")
    if use_embedding:
        nearest, score = nearest_catalogue_entry(phrase)
        if score >= EMBEDDING_THRESHOLD and (nearest.endswith(suffix) if suffix else not _is_result(nearest, phrase)):
            return Name(nearest, "embedding")
    return Name(candidates[0], "coined")

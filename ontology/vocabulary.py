"""Canonical parameter names: their synonyms, default fact kind, unit, value type and text phrases.

Loaded once per process from ontology/data/ (synonyms.json started from the eval's list and was
extended; parameters.json holds one typed template per canonical parameter). Every extractor and
every human edit passes parameter names through `canonical_parameter` so one knob has one name.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class ParameterSpec:
    """The template of one canonical parameter (ORKG-template style: name, kind, unit, value type)."""

    name: str
    kind: str
    unit: str | None
    value_type: str  # "number", "version" or "text"
    phrases: tuple[str, ...]


def name_key(name: str) -> str:
    """Lower-case, with '-', ' ' and '_' treated alike (the matching rule of FACTS_FORMAT.md)."""
    return re.sub(r"[-\s_]+", "_", str(name or "").strip().lower()).strip("_")


@cache
def _synonyms() -> dict[str, str]:
    table: dict[str, str] = {}
    for canon, alts in json.loads((DATA_DIR / "synonyms.json").read_text()).items():
        for alt in [canon, *alts]:
            table[name_key(alt)] = canon
    return table


@cache
def parameter_specs() -> dict[str, ParameterSpec]:
    """Every canonical parameter with a template, by name."""
    raw = json.loads((DATA_DIR / "parameters.json").read_text())
    return {
        name: ParameterSpec(name, spec["kind"], spec["unit"], spec["value_type"], tuple(spec["phrases"]))
        for name, spec in raw.items()
    }


def canonical_parameter(name: str) -> str:
    """The canonical snake_case name for a parameter name or synonym ('TP' -> 'tensor_parallel_size')."""
    key = name_key(name)
    return _synonyms().get(key, key)


def spec_for(name: str) -> ParameterSpec | None:
    """The template of a (canonicalised) parameter, or None for a name outside the catalogue."""
    return parameter_specs().get(canonical_parameter(name))


# How annotators' snake_case names say what kind of fact they are (FACTS_FORMAT.md: a knob the paper
# sets is a parameter; hardware, versions, measured levels and results are constraints). Read only for
# names outside the catalogue, which is what every name of an unseen paper is at first.
_PARAMETER_NAME = re.compile(r"^slo_|_pct_of_")  # a target or a setting relative to something else
_CONSTRAINT_NAME = re.compile(
    r"speedup|_reduction|_improvement|_increase|_gain|_saving|_overhead|_version$|^gpu_|_gb$|_gbps$|_gb_s$|"
    r"_tb$|_tflops$|_b$|bandwidth|_per_s$|_pct$|_attainment|_utili[sz]ation|_sparsity|_ratio$|_fraction|_hit_rate")
_KNOB_NAME = re.compile(
    r"_size$|_len$|_length$|_threads$|_rank$|_bits$|_dtype$|_policy$|_mode$|_layout$|_scale$|_partitioning$|"
    r"_tokens$|_window$|_budget$|_threshold$|_interval$|_timeout$|_factor$|_degree$|temperature$|_stride$")


def kind_of_name(name: str) -> str | None:
    """The fact kind a parameter name implies: its template's kind for a catalogue name, else what its
    shape says ('*_speedup', '*_gb', '*_version' -> constraint; '*_size', '*_threads', 'slo_*' -> parameter),
    else None (the sentence has to decide)."""
    spec = spec_for(name)
    if spec is not None:
        return spec.kind
    key = name_key(name)
    if _PARAMETER_NAME.search(key):
        return "parameter"
    if _CONSTRAINT_NAME.search(key):
        return "constraint"
    return "parameter" if _KNOB_NAME.search(key) else None


@cache
def phrase_index() -> list[tuple[re.Pattern[str], str]]:
    """(pattern, parameter) pairs, longest phrase first, for finding knobs named in a sentence.

    A phrase is literal text (case-insensitive), or a regex when written "re:..."
    (e.g. "re:(?-i:\\bTP\\b)" for the abbreviation in capitals only).
    """
    pairs = {(phrase, spec.name) for spec in parameter_specs().values() for phrase in spec.phrases}
    ordered = sorted(pairs, key=lambda pair: (-len(pair[0]), pair[0]))
    return [
        (re.compile(phrase[3:] if phrase.startswith("re:") else r"(?<![a-z])" + re.escape(phrase), re.IGNORECASE), name)
        for phrase, name in ordered
    ]


def parameters_mentioned(sentence: str) -> list[str]:
    """Canonical parameters whose phrases occur in the sentence, most specific (longest) first."""
    text = re.sub(r"\s+", " ", sentence)
    found: list[str] = []
    taken = bytearray(len(text))  # characters a longer phrase already claimed (linear in the text)
    for pattern, name in phrase_index():
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            taken[start:end] = b"\x01" * (end - start)
            if name not in found:
                found.append(name)
    return found


_SIZE_QUESTION = re.compile(r"\b(?:how (?:large|big|small|long|many)|what size|which size|size of|sized?)\b", re.IGNORECASE)


def parameters_in_question(question: str) -> list[str]:
    """Parameters a search question is about: named ones, plus "<noun> size" for size questions
    ("how large should KV cache blocks be" -> block_size)."""
    found = parameters_mentioned(question)
    if _SIZE_QUESTION.search(question):
        for noun in re.findall(r"[a-z]+", question.lower()):
            for name in parameters_mentioned(f"{noun.removesuffix('es') if noun.endswith('ches') else noun.rstrip('s')} size"):
                if name not in found:
                    found.append(name)
    return found

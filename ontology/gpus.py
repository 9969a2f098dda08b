"""The one vocabulary of GPU model names (ontology/data/gpus.json), typed and validated on first use.

Read by every place that recognises a GPU in text: the rule extractors, the PDF environment finder
and the scoring rules in papers, and the advisor's name resolution (papers and ontology may not
import the advisor, so the vocabulary lives here). `pattern()` is the regular expression they
embed; it is an alternation of literal names, so it matches in time linear in the text's length.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "data" / "gpus.json"
_NAME = re.compile(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*")
_TOP_KEYS = {"_about", "brands", "vendors", "models"}


class GpuVocabularyError(ValueError):
    """gpus.json is malformed; the message names the file and the offending entry."""


@dataclass(frozen=True)
class GpuModel:
    """One GPU model name as its maker writes it ("A100", "RTX 4090", "MI300X")."""

    name: str
    vendor: str


@dataclass(frozen=True, eq=False)  # compared by identity, so the lookups below can be cached per vocabulary
class GpuVocabulary:
    """Every known GPU model name, the brand words that may precede one, and each vendor's source page."""

    models: tuple[GpuModel, ...]
    brands: tuple[str, ...]
    sources: dict[str, str]

    def names(self) -> list[str]:
        """The model names, in the file's order."""
        return [m.name for m in self.models]

    def pattern(self, *, with_brand: bool = False) -> str:
        """A non-capturing regex matching any model name (spaces optional: "RTX 4090", "RTX4090").

        Longer names come first, so "A100" wins over "A10" and "RTX 3090 Ti" over "RTX 3090" where
        both fit. With `with_brand`, up to two brand words may stand before the name ("NVIDIA
        GeForce RTX 4090", "Tesla-V100"), and the match includes them.
        """
        names = sorted(self.names(), key=lambda n: (-len(n), n))
        models = "(?:" + "|".join(r"\s?".join(map(re.escape, n.split(" "))) for n in names) + ")"
        return rf"(?:{self.brand_pattern()}[\s-]+){{0,2}}{models}" if with_brand else models

    def word_pattern(self) -> str:
        """`pattern()` standing as a whole word: no letter or digit right before or after it."""
        return rf"(?<![A-Za-z0-9]){self.pattern()}(?![A-Za-z0-9])"

    def brand_pattern(self) -> str:
        """A non-capturing regex matching one brand word ("NVIDIA", "Tesla", "GeForce", "AMD")."""
        return "(?:" + "|".join(map(re.escape, self.brands)) + ")"

    def canonical(self, text: str) -> str | None:
        """The vocabulary's spelling of a model name written with or without its spaces, else None."""
        return _by_key(self).get(_key(text))

    def find(self, text: str) -> list[str]:
        """The model names standing as whole words in `text`, canonical spelling, first mention first."""
        found: list[str] = []
        for hit in _compiled(self).finditer(text):
            name = self.canonical(hit.group(0))
            if name and name not in found:
                found.append(name)
        return found


def _key(text: str) -> str:
    return re.sub(r"\s+", "", text).upper()


@cache
def _by_key(vocabulary: GpuVocabulary) -> dict[str, str]:
    return {_key(name): name for name in vocabulary.names()}


@cache
def _compiled(vocabulary: GpuVocabulary) -> re.Pattern[str]:
    return re.compile(vocabulary.word_pattern())


def _fail(message: str) -> GpuVocabularyError:
    return GpuVocabularyError(f"{DATA_FILE}: {message}")


def parse_vocabulary(raw: object) -> GpuVocabulary:
    """Check the parsed JSON of gpus.json and build the vocabulary; any problem raises GpuVocabularyError."""
    if not isinstance(raw, dict) or set(raw) != _TOP_KEYS:
        keys = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise _fail(f"expected exactly the keys {sorted(_TOP_KEYS)}, found {keys}")
    vendors = raw["vendors"]
    if not isinstance(vendors, dict) or not vendors:
        raise _fail("'vendors' must map each vendor to {\"source\": URL}")
    sources: dict[str, str] = {}
    for vendor, entry in vendors.items():
        if not isinstance(entry, dict) or set(entry) != {"source"} or not str(entry["source"]).startswith("https://"):
            raise _fail(f"vendor {vendor!r} needs exactly one key 'source' with an https:// URL")
        sources[vendor] = entry["source"]
    brands = raw["brands"]
    if not isinstance(brands, list) or not all(isinstance(b, str) and _NAME.fullmatch(b) for b in brands):
        raise _fail("'brands' must be a list of words")
    models: list[GpuModel] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(raw["models"] if isinstance(raw["models"], list) else [None]):
        if not isinstance(entry, dict) or set(entry) != {"name", "vendor"}:
            raise _fail(f"models[{index}] must have exactly the keys 'name' and 'vendor': {entry!r}")
        name, vendor = entry["name"], entry["vendor"]
        if not isinstance(name, str) or not _NAME.fullmatch(name) or not any(c.isdigit() for c in name):
            raise _fail(f"models[{index}]: {name!r} is not a model name (words of letters and digits, with a number)")
        if vendor not in sources:
            raise _fail(f"models[{index}] {name!r}: vendor {vendor!r} is not under 'vendors'")
        if _key(name) in seen:
            raise _fail(f"models[{index}] {name!r} repeats {seen[_key(name)]!r}")
        seen[_key(name)] = name
        models.append(GpuModel(name, vendor))
    return GpuVocabulary(tuple(models), tuple(brands), sources)


@cache
def vocabulary() -> GpuVocabulary:
    """The vocabulary from ontology/data/gpus.json, loaded and validated once per process."""
    return parse_vocabulary(json.loads(DATA_FILE.read_text(encoding="utf-8")))

"""Query understanding for keyword search: the other ways papers write a query's numbers and units.

Runs on every search query before the full-text channel. "8K" is also written 8192 and 8k, "2 MB"
also 2MB, "A100 80GB" also "A100 80 GB", and a GPU name as the vocabulary spells it; the variants
are added to the words the full-text query may match (it matches any of them), so a question
phrased one way finds a passage written the other way.
"""
from __future__ import annotations

import re

from ontology.gpus import vocabulary as gpu_vocabulary

_SUFFIXED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)([kKmM])(?![a-zA-Z])")
_JOINED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(GB|MB|KB|TB|GiB|MiB|ms|us|GB/s|Gbps|B)\b")
_SPACED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s+(GB|MB|KB|TB|GiB|MiB|ms|us|GB/s|Gbps)\b")


def number_variants(query: str) -> list[str]:
    """Spellings of the query's numbers with units that the query itself does not use."""
    variants: list[str] = []
    for number, suffix in _SUFFIXED.findall(query):
        value = float(number) * (1000 if suffix.lower() == "k" else 1_000_000)
        variants += [f"{number}{suffix.lower()}", str(int(value))]
        if suffix.lower() == "k":
            variants.append(str(int(float(number) * 1024)))
    variants += [f"{n} {u}" for n, u in _JOINED.findall(query)]
    variants += [f"{n}{u}" for n, u in _SPACED.findall(query)]
    return variants


def expand_query(query: str) -> str:
    """The query plus its number/unit and GPU-name variants, for the full-text channel."""
    extra = number_variants(query)
    extra += [name for name in gpu_vocabulary().find(query) if name.lower() not in query.lower()]
    return " ".join([query, *dict.fromkeys(extra)])

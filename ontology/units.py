"""Numbers and units as papers write them, turned into canonical numbers and units.

Runs whenever a fact is built or edited (extractors, human edits): "0.2s" becomes 200 ms, "2K"
tokens 2048, "2-4×" a range 2..4 x, "13B, 66B, and 175B" a list, "≥ 1000" a lower bound. The stated
text is kept beside the canonical number so a quote can always be checked against it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# Canonical unit per unit family, and the factor from each spelling to it.
UNIT_ALIASES: dict[str, tuple[str, float]] = {
    "ms": ("ms", 1.0), "millisecond": ("ms", 1.0), "milliseconds": ("ms", 1.0),
    "s": ("ms", 1000.0), "sec": ("ms", 1000.0), "secs": ("ms", 1000.0), "second": ("ms", 1000.0),
    "seconds": ("ms", 1000.0), "us": ("ms", 0.001), "µs": ("ms", 0.001), "min": ("ms", 60000.0),
    "minutes": ("ms", 60000.0),
    "gb": ("GB", 1.0), "gib": ("GB", 1.073741824), "tb": ("GB", 1000.0), "tib": ("GB", 1099.511627776),
    "mb": ("MB", 1.0), "mib": ("MB", 1.048576), "kb": ("KB", 1.0), "kib": ("KB", 1.024),
    "gb/s": ("GB/s", 1.0), "gbps": ("Gbps", 1.0), "gbit/s": ("Gbps", 1.0), "gb/sec": ("GB/s", 1.0),
    "tbps": ("Gbps", 1000.0), "tflop/s": ("TFLOP/s", 1.0), "tflops": ("TFLOP/s", 1.0),
    "token": ("tokens", 1.0), "tokens": ("tokens", 1.0), "tok": ("tokens", 1.0),
    "tokens/s": ("tokens/s", 1.0), "token/s": ("tokens/s", 1.0), "tok/s": ("tokens/s", 1.0),
    "tokens/sec": ("tokens/s", 1.0),
    "%": ("%", 1.0), "percent": ("%", 1.0),
    "x": ("x", 1.0), "×": ("x", 1.0), "times": ("x", 1.0),
    "gpu": ("GPUs", 1.0), "gpus": ("GPUs", 1.0),
    "request": ("requests", 1.0), "requests": ("requests", 1.0),
    "bit": ("bits", 1.0), "bits": ("bits", 1.0),
    "b": ("B params", 1.0), "billion": ("B params", 1.0), "m": ("M params", 1.0),
}
CANONICAL_UNITS = sorted({canon for canon, _ in UNIT_ALIASES.values()} | {
    "threads", "replicas", "adapters", "clients", "samples", "elements", "sessions", "nodes",
})
# Unit families whose numbers convert into each other (for a parameter whose unit is fixed).
FAMILY = {"ms": "time", "GB": "memory", "MB": "memory", "KB": "memory"}
TO_BYTES = {"GB": 1e9, "MB": 1e6, "KB": 1e3}

_SUFFIX = {"k": 1024.0, "m": 1e6}  # "2K tokens" / "128K context" are powers of two in this field
NUMBER = r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?(?:[kKmM](?![a-zA-Z]))?"
_RANGE_SEP = r"\s*(?:-|–|—|~|∼|to)\s*"
# Searches start a number only where one begins: retrying from every digit inside a long run of
# digits costs time quadratic in its length.
_AT_NUMBER = r"(?<![\d,.])"


class UnitError(ValueError):
    """A unit no canonical unit is known for, or two units that cannot convert."""


@dataclass
class ParsedValue:
    """A stated value: its text, canonical number(s) and canonical unit."""

    raw: str
    unit: str | None = None
    num: float | None = None
    low: float | None = None
    high: float | None = None
    items: list[float] = field(default_factory=list)
    bound: str | None = None  # ">=", "<=", ">" or "<" for "at least 1000", "≤ 200ms"

    @property
    def is_number(self) -> bool:
        return self.num is not None


def canonical_unit(unit: str | None) -> tuple[str | None, float]:
    """('ms', 1000.0) for 's'; (None, 1.0) for no unit; raises UnitError for an unknown one."""
    if unit is None or not str(unit).strip():
        return None, 1.0
    key = re.sub(r"\s+", "", str(unit).strip().lower()).replace("×", "x")
    if key in UNIT_ALIASES:
        return UNIT_ALIASES[key]
    if key.rstrip("s") in UNIT_ALIASES:
        return UNIT_ALIASES[key.rstrip("s")]
    for canon in CANONICAL_UNITS:
        if canon.lower().replace(" ", "") == key:
            return canon, 1.0
    raise UnitError(f"unknown unit {unit!r}; use one of {', '.join(CANONICAL_UNITS)}")


def parse_number(token: str, unit: str | None = None) -> float:
    """'2,000' -> 2000, '2K' -> 2048 (tokens) or 2000, '0.5' -> 0.5."""
    text = token.replace(",", "").strip()
    mult = 1.0
    if text and text[-1].lower() in _SUFFIX:
        suffix = text[-1].lower()
        mult = _SUFFIX[suffix] if unit == "tokens" or suffix == "m" else 1000.0
        text = text[:-1]
    return float(text) * mult


def parse_value(raw: str | float | int | None, unit: str | None = None) -> ParsedValue:
    """Parse a stated value ('2-4', '≥ 1000', '13, 66, 175', '0.2s', '2K') with an optional unit.

    A unit inside the text wins over `unit`; the result carries the canonical unit and numbers.
    Text that holds no number (e.g. 'prefill-first') comes back with num None.
    """
    text = "" if raw is None else str(raw).strip()
    stated_unit = unit
    match = re.search(rf"{_AT_NUMBER}({NUMBER})\s*([a-zA-Zµ%×/]+(?:/s(?:ec)?)?)\s*$", text)
    if match and not re.fullmatch(r"[kKmM]", match.group(2)):
        try:
            canonical_unit(match.group(2))
            stated_unit = match.group(2)
        except UnitError:
            pass
    canon, factor = canonical_unit(stated_unit)
    result = ParsedValue(raw=text, unit=canon)
    numbers = [parse_number(n, canon) * factor for n in re.findall(NUMBER, text) if re.search(r"\d", n)]
    if not all(math.isfinite(n) for n in numbers):  # "1e309" is no number a paper states
        return result
    if not numbers:
        return result
    bound = re.match(r"^\s*(≥|>=|at least|≤|<=|at most|up to|>|<)", text, re.IGNORECASE)
    if bound:
        result.bound = {"≥": ">=", "at least": ">=", "≤": "<=", "at most": "<=", "up to": "<="}.get(
            bound.group(1).lower(), bound.group(1))
    if len(numbers) == 2 and re.search(rf"{_AT_NUMBER}{NUMBER}\s*[×x%]?{_RANGE_SEP}{NUMBER}", text):
        result.low, result.high = numbers
    elif len(numbers) > 1:
        result.items = numbers
    result.num = numbers[0]
    return result


def check_finite(text: str) -> None:
    """UnitError when a number written in `text` is too large to be a number at all ("1e309")."""
    for token in re.findall(NUMBER, text):
        if not math.isfinite(parse_number(token)):
            raise UnitError(f"{token} is not a finite number; write the value the paper states")


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert between canonical units of one family (ms only with ms; GB/MB/KB with each other)."""
    if from_unit == to_unit:
        return value
    if FAMILY.get(from_unit) == FAMILY.get(to_unit) == "memory":
        return value * TO_BYTES[from_unit] / TO_BYTES[to_unit]
    raise UnitError(f"cannot convert {from_unit} to {to_unit}")


def format_number(value: float) -> str:
    """200.0 -> '200', 0.125 -> '0.125' (how a canonical number is shown and exported)."""
    return f"{value:.6g}" if value != int(value) else str(int(value))

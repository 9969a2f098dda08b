"""Version arithmetic for engine releases, CUDA versions and compute capabilities.

Runs on every recommendation: catalogs store versions as strings ("0.5.3.post1", "12.1", "8.9")
and the rules compare them. Kept tiny and dependency-free so the core stays plain Python.
"""
from __future__ import annotations

import re
from functools import lru_cache

_PART = re.compile(r"(\d+)")


@lru_cache(maxsize=4096)
def vkey(version: str) -> tuple[int, ...]:
    """Sortable key: "0.5.3.post1" -> (0, 5, 3, 1); "12.1" -> (12, 1); non-numeric parts are dropped.
    Cached: the catalogs hold a few hundred version strings, compared ~10^5 times a recommendation."""
    return tuple(int(p) for p in _PART.findall(str(version)))


def at_least(version: str, minimum: str | None) -> bool:
    """True when `version` >= `minimum` (a missing minimum means no constraint)."""
    if not minimum:
        return True
    a, b = vkey(version), vkey(minimum)
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) >= b + (0,) * (width - len(b))


def at_most(version: str, maximum: str | None) -> bool:
    """True when `version` <= `maximum` (a missing maximum means no constraint)."""
    if not maximum:
        return True
    return at_least(maximum, version)


def cuda_tag(cuda: str) -> str:
    """"11.8" -> "cu118", the suffix wheels and index URLs use."""
    major, minor = (vkey(cuda) + (0, 0))[:2]
    return f"cu{major}{minor}"

"""arXiv identifiers: the one place that knows their two shapes, used wherever an id enters (commands,
crawled answers, URLs) so a malformed one is refused with a clear message instead of being stored.

- new style (since 2007): `YYMM.NNNN` or `YYMM.NNNNN`, e.g. `2309.06180`;
- old style (before 2007): `archive[.SUBJECT]/YYMMNNN`, e.g. `astro-ph/0601001`, `math.GT/0309136`.
Either may carry a version suffix `vN` and an `arXiv:` prefix. Old-style ids contain a "/", so URL
patterns take one slash inside an id (URL_PATTERN).
"""
from __future__ import annotations

import argparse
import re

MAX_LENGTH = 40  # Paper.arxiv_id's column
MAX_VERSION = 9999
# Linear patterns: fixed-width digit groups and one bounded archive name, nothing nested.
NEW_STYLE = r"\d{4}\.\d{4,5}"
OLD_STYLE = r"[a-z][a-z-]{0,15}(?:\.[A-Za-z][A-Za-z-]{0,15})?/\d{7}"
_ID = re.compile(rf"(?:arxiv:)?\s*({NEW_STYLE}|{OLD_STYLE})(?:v(\d{{1,4}}))?", re.IGNORECASE)
# A paper's key in a URL: any id without a slash, or with one slash inside (old style).
URL_PATTERN = r"[^/]+(?:/[^/]+)?"


class ArxivIdError(ValueError):
    """Text that is not an arXiv id; the message says what an id looks like."""


def parse(text: str) -> tuple[str, int]:
    """("2309.06180", 2) for "arXiv:2309.06180v2"; an id without a version is version 1."""
    candidate = text.strip() if isinstance(text, str) else ""
    match = _ID.fullmatch(candidate) if len(candidate) <= MAX_LENGTH + 12 else None
    if match is None:
        shown = candidate if len(candidate) <= 60 else candidate[:57] + "..."
        raise ArxivIdError(f"{shown!r} is not an arXiv id: expected e.g. 2309.06180, 2309.06180v2 or astro-ph/0601001")
    version = int(match.group(2) or 1)
    if not 1 <= version <= MAX_VERSION:
        raise ArxivIdError(f"{candidate!r} has version {version}; arXiv versions start at v1")
    return match.group(1), version


def normalise(text: str) -> str:
    """The id without prefix or version; ArxivIdError when `text` is not an arXiv id."""
    return parse(text)[0]


def argument(text: str) -> str:
    """argparse `type=` for command options that take an arXiv id: a bad one is a usage error (exit 2)."""
    try:
        return normalise(text)
    except ArxivIdError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def is_arxiv_id(text: str) -> bool:
    try:
        parse(text)
    except ArxivIdError:
        return False
    return True

"""Progress bars for long management commands (extract_papers, import_pdfs, reindex_search, score_papers).

A bar is drawn on the terminal's stderr only when it is a terminal (tqdm's `disable=None`), so logs,
pipes and tests see the commands' plain lines; messages printed while a bar runs go above it.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


class Progress(Iterable[T]):
    """Iterate `items` under a bar; `say` prints a line to `stream` without tearing the bar."""

    def __init__(self, items: Iterable[T], what: str, total: int | None = None) -> None:
        self._bar = tqdm(items, desc=what, total=total, unit="paper", file=sys.stderr, disable=None,
                         dynamic_ncols=True)

    def __iter__(self) -> Iterator[T]:
        return iter(self._bar)

    def say(self, stream, text: str) -> None:
        with tqdm.external_write_mode(file=sys.stderr):
            stream.write(text)

    def note(self, text: str) -> None:
        """Show `text` beside the bar (the item being worked on)."""
        self._bar.set_postfix_str(text[:40], refresh=False)


def progress(items: Iterable[T], what: str, total: int | None = None) -> Progress[T]:
    return Progress(items, what, total)

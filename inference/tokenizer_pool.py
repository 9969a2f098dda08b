"""Lends a tokenizer to a thread that encodes a prompt, so a long prompt never holds the shared tokenizer.

The engine loop decodes every generated token with the shared tokenizer under its lock, and HF fast
tokenizers are not safe to share between threads without that lock. Encoding a multi-megabyte prompt
takes seconds; under the shared lock that stalled every stream and every other request. So a short
text (the common case) is encoded with the shared tokenizer under its lock, and a long one with one of
a few private copies (made on first need, under the lock, about a second each for a 150k vocabulary).
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# texts up to this many characters encode in milliseconds: cheaper under the shared lock than a copy
SHARED_MAX_CHARS = 16_384


class TokenizerPool:
    """`with pool.lend(len(text)) as tok: tok.encode(text)`; at most `copies` private copies ever exist."""

    def __init__(self, tokenizer: Any, lock: threading.Lock, copies: int = 2) -> None:
        self.tokenizer = tokenizer
        self.lock = lock
        self.copies = copies
        self.made = 0
        self._made_lock = threading.Lock()
        self._idle: queue.Queue[Any] = queue.Queue()

    @contextmanager
    def lend(self, chars: int) -> Iterator[Any]:
        if chars <= SHARED_MAX_CHARS:
            with self.lock:
                yield self.tokenizer
            return
        private = self._take()
        try:
            yield private
        finally:
            self._idle.put(private)

    def _take(self) -> Any:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._made_lock:
            make = self.made < self.copies
            self.made += make
        if not make:
            return self._idle.get()  # every copy is busy: wait for one, still off the shared lock
        with self.lock:  # copying reads the shared tokenizer, which the loop thread may be using
            return copy.deepcopy(self.tokenizer)

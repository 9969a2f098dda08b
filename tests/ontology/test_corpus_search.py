"""On real corpus papers: extraction feeds search, and the vLLM block-size facts answer the block-size question."""
from __future__ import annotations

import pytest

from ontology.selectors import hybrid_search
from papers.services.extraction import extract_paper

# with the other corpus ingests on one worker: the second ingest of a text reads its embedding from the cache
pytestmark = pytest.mark.xdist_group("corpus-ingest")

# vLLM (the answer) and two papers that also state KV block sizes (the distractors).
PAPERS = ("2309.06180", "2408.12757", "2407.00079")


@pytest.mark.slow
@pytest.mark.django_db
def test_the_block_size_question_finds_the_vllm_block_size_facts_in_the_top_five(corpus_dir, tmp_path, settings):
    from papers.services import ingest_pdf  # the real ingest: sections are searched too

    settings.DATA_DIR = tmp_path
    for arxiv_id in PAPERS:
        paper = ingest_pdf(corpus_dir / "pdfs" / f"{arxiv_id}.pdf", arxiv_id=arxiv_id)
        assert extract_paper(paper.pk, use_llm=False).status == "done"
    top = hybrid_search("how large should KV cache blocks be", limit=5)
    vllm_block = [r for r in top if r["type"] == "fact" and r["paper"] == "2309.06180" and "block size" in r["text"]]
    assert vllm_block, [(r["paper"], r["text"][:80]) for r in top]

"""Page passages in the search index and query understanding for numbers and units."""
from __future__ import annotations

import pytest

from ontology.query_terms import expand_query
from ontology.search_index import index_paper, page_passages
from ontology.selectors import hybrid_search

PAGE = (
    "Our scheduler admits new requests every iteration. It keeps decodes running while prefills are split. "
    "We evaluate it on eight GPUs connected by NVLink. Each prompt is limited to 8192 tokens in the traces. "
    "Latency 0 50 100 150 200 250 Throughput 10 20 30 40 50. "
    "The memory pool is carved into 2MB chunks that the allocator maps on demand. "
    "Requests that exceed the pool wait in a queue until a chunk is freed."
)


def test_passages_are_overlapping_windows_of_one_page_without_figure_text():
    passages = page_passages(PAGE)
    assert len(passages) >= 2
    assert not any("0 50 100 150" in p for p in passages)
    shared = "Each prompt is limited to 8192 tokens"
    assert shared in passages[0] and shared in passages[1], "neighbouring windows share a sentence"


def test_query_numbers_and_units_are_also_searched_as_papers_write_them():
    assert {"8192", "8000", "8k"} <= set(expand_query("prompts of 8K tokens").split())
    assert "2MB" in expand_query("2 MB chunks")
    assert "80 GB" in expand_query("A100 80GB")


@pytest.mark.django_db
def test_a_question_finds_the_page_passage_that_answers_it(paper):
    paper.pages.create(number=3, text=PAGE)
    index_paper(paper)
    results = hybrid_search("how big are the memory pool chunks, 2 MB?", limit=5)
    assert results[0]["type"] == "passage" and results[0]["page"] == 3
    assert "2MB chunks" in results[0]["text"]

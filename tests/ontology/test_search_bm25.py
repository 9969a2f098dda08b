"""BM25 keyword ranking in PostgreSQL: term statistics kept by trigger, whole-page documents."""
from __future__ import annotations

import pytest
from django.db import connection

from ontology.models import SearchDocument, SearchStats, SearchTerm
from ontology.search_index import index_paper
from ontology.selectors import hybrid_search
from ontology.services import store_facts
from tests.ontology.conftest import make_fact

pytestmark = pytest.mark.django_db

RECOUNT = """
SELECT lexeme, count(*) FROM ontology_searchdocument d, unnest(tsvector_to_array(d.search_vector)) lexeme
WHERE d.search_vector IS NOT NULL GROUP BY lexeme
"""


def _recounted() -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
    """Document frequencies and per-type (documents, summed lengths) counted afresh from the documents."""
    with connection.cursor() as cursor:
        cursor.execute(RECOUNT)
        df = dict(cursor.fetchall())
        cursor.execute("SELECT doc_type, count(*), sum(length(search_vector)) FROM ontology_searchdocument "
                       "WHERE search_vector IS NOT NULL GROUP BY doc_type")
        stats = {doc_type: (docs, lexemes) for doc_type, docs, lexemes in cursor.fetchall()}
    return df, stats


def _kept() -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
    return (dict(SearchTerm.objects.values_list("lexeme", "df")),
            {s.doc_type: (s.docs, s.lexemes) for s in SearchStats.objects.filter(docs__gt=0)})


def test_term_statistics_follow_every_index_write_and_cascade(paper, other_paper):
    paper.pages.create(number=1, text="The scheduler admits requests every iteration. " * 3)
    paper.pages.create(number=2, text="Blocks of sixteen tokens hold the KV cache of one sequence. " * 3)
    other_paper.pages.create(number=1, text="Chunked prefills share an iteration with decodes. " * 3)
    index_paper(paper)
    index_paper(other_paper)
    store_facts(paper, [make_fact()])
    kept = _kept()
    assert kept == _recounted()
    assert kept[0]["iter"] == 3 + 1, "two pages and their passages say 'iteration'"
    assert kept[1]["page"][0] == 3

    index_paper(paper)  # re-indexing replaces the documents: the counts do not grow
    assert _kept() == kept
    paper.delete()  # documents leave by cascade, not through the indexer
    assert _kept() == _recounted()
    assert "block" not in _kept()[0] and _kept()[1]["page"][0] == 1


def test_a_rare_word_outranks_many_common_ones(paper, other_paper):
    common = "The model serves requests on the GPU with the cache and the batch of requests. "
    paper.pages.create(number=4, text=common * 4)
    other_paper.pages.create(number=7, text=common + "Requests are preempted by recomputation, never swapped. " + common)
    index_paper(paper)
    index_paper(other_paper)
    results = hybrid_search("are preempted requests recomputed on the GPU", limit=3)
    assert (results[0]["paper"], results[0]["page"]) == ("2403.02310", 7)


def test_whole_pages_rank_their_results_but_are_never_results(paper, other_paper):
    # the answer's words are spread over one page (a table caption and its cells), no passage holds them all
    filler = " ".join(f"Run {n} repeats the measurement five times and reports the mean." for n in range(6))
    table = f"Table 3: Hardware of the testbed. {filler} GPU A100 80GB. {filler} Interconnect NVLink 600 GB/s. " \
            f"{filler} Host memory 1 TB DDR4."
    other_paper.pages.create(number=9, text=table)
    paper.pages.create(number=2, text="Memory use grows with the batch and falls when requests finish. " * 2)
    index_paper(paper)
    index_paper(other_paper)
    assert SearchDocument.objects.filter(doc_type="page", paper=other_paper, page=9, embedding__isnull=True).exists()
    results = hybrid_search("testbed GPU interconnect and host memory", limit=5)
    assert (results[0]["paper"], results[0]["page"]) == ("2403.02310", 9)
    assert all(r["type"] != "page" for r in results)

"""Hybrid search and evidence over stored facts (real PostgreSQL + pgvector, the packaged MiniLM model)."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from ontology.selectors import evidence_for, hybrid_search
from ontology.services import reject_fact, store_facts, verify_fact
from tests.ontology.conftest import make_fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(paper, other_paper):
    store_facts(paper, [
        make_fact(),
        make_fact(kind="trade_off", value=None, quote="If the block size is too large, internal fragmentation increases",
                  effect="larger blocks raise internal fragmentation"),
        make_fact(kind="constraint", parameter="gpu_count", value="8", unit="GPUs", quote="OPT-175B, 8 GPUs", page=10),
    ])
    store_facts(other_paper, [
        make_fact(subject="Sarathi-Serve", parameter="chunk_size", value="512", page=12,
                  quote="We use token budget of 2048 and 512 for all models"),
        make_fact(subject="Sarathi-Serve", kind="constraint", parameter="cuda_version", value="12.1", unit=None,
                  page=19, quote="Sarathi-Serve has been tested with CUDA 12.1 on A100 and A40 GPUs."),
    ])


def test_a_question_about_block_size_finds_the_block_size_facts_first(stored):
    results = hybrid_search("how large should KV cache blocks be", limit=5)
    assert results[0]["type"] == "fact" and "block size" in results[0]["text"]
    top = [r for r in results[:2]]
    assert all(r["paper"] == "2309.06180" for r in top)
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert {"type", "paper", "page", "text", "score", "fact_id"} <= set(results[0])


def test_exact_words_matter_too(stored):
    results = hybrid_search("CUDA 12.1", limit=3)
    assert results[0]["paper"] == "2403.02310" and "12.1" in results[0]["text"]


def test_type_filter_and_empty_queries(stored):
    assert hybrid_search("block size", types=("section",)) == []
    assert hybrid_search("   ") == []


def test_rejected_facts_are_not_found(stored, editor):
    from ontology.models import Fact

    reject_fact(Fact.objects.get(parameter="cuda_version"), editor)
    assert all("12.1" not in r["text"] for r in hybrid_search("CUDA 12.1", limit=5))


def test_evidence_cites_arxiv_page_and_puts_verified_first(stored, editor):
    from ontology.models import Fact

    verify_fact(Fact.objects.get(parameter="block_size", kind="trade_off"), editor)
    evidence = evidence_for("block size for the KV cache", parameters=["page_size"], limit=5)
    assert evidence[0]["verified"] is True
    assert evidence[0]["source"] == "arXiv:2309.06180 p.12"
    assert {e["parameter"] for e in evidence} == {"block_size"}
    by_subject = evidence_for("which CUDA", subjects=["sarathi-serve"])
    assert {e["subject"] for e in by_subject} == {"Sarathi-Serve"}


def test_the_search_command_prints_the_json_contract(stored, capsys):
    call_command("search", "how large should KV cache blocks be", "--json", "--limit", "3")
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["results"]) == 3
    assert set(payload["results"][0]) >= {"type", "paper", "page", "text", "score"}


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["kv " * 20000, "block size \udcff\udcfe", "   ", "x" * 301])
def test_the_search_command_refuses_an_unusable_query_with_exit_status_2(query):
    from tests.fuzz.commands import run_command

    outcome = run_command("search", query, "--json")
    assert outcome.clean_error, outcome
    assert outcome.out == ""


QUESTION = "how large should KV cache blocks be"


def _documents_near(vector, paper, doc_type: str, count: int, spread: float, seed: int) -> list:
    """`count` unsaved search documents scattered around `vector` (nearer to it than any real text)."""
    import numpy

    from ontology.models import SearchDocument

    rng = numpy.random.default_rng(seed)
    return [SearchDocument(doc_type=doc_type, paper=paper, page=1, text=f"{doc_type} {i}",
                           embedding=list(numpy.asarray(vector) + rng.normal(0, spread, len(vector))))
            for i in range(count)]


def _search_through_the_hnsw_index(**kwargs) -> list:
    """hybrid_search with sequential scans off: the plan a large table gets."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
    try:
        return hybrid_search(QUESTION, **kwargs)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_seqscan")


def test_a_type_filter_still_fills_the_limit_when_other_documents_are_nearer(stored, paper):
    """The HNSW scan walks on past nearer documents of other types (pgvector's iterative scan), so a
    fact search is not emptied by the many page passages that sit closer to the question."""
    from ontology.embeddings import embed_one
    from ontology.models import SearchDocument

    SearchDocument.objects.bulk_create(_documents_near(embed_one(QUESTION), paper, "passage", 300, 0.02, seed=0))
    results = _search_through_the_hnsw_index(limit=4, types=("fact",))
    assert len(results) == 4 and {r["type"] for r in results} == {"fact"}


def test_dead_index_entries_do_not_hide_live_documents(stored, paper):
    """Rolled-back or re-indexed rows stay in the HNSW graph as dead entries until a vacuum."""
    from django.db import transaction

    from ontology.embeddings import embed_one
    from ontology.models import SearchDocument

    try:
        with transaction.atomic():
            SearchDocument.objects.bulk_create(_documents_near(embed_one(QUESTION), paper, "fact", 300, 0.02, seed=1))
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert len(_search_through_the_hnsw_index(limit=4, types=("fact",))) == 4

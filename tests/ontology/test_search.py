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

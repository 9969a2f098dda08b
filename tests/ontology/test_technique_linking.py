"""Facts are linked to serving techniques by the extractor's vocabulary and by a person (a revision)."""
from __future__ import annotations

import json

import pytest

from ontology.models import Fact, FactTechnique, Technique
from ontology.schema import FactValidationError
from ontology.services import fact_technique_names, set_fact_techniques, store_facts
from ontology.techniques import (
    TechniqueVocabularyError,
    load_techniques,
    technique_names,
    techniques_for_fact,
    techniques_in_text,
)
from tests.ontology.conftest import make_fact

REQUIRED = ("paged_kv_cache", "continuous_batching", "chunked_prefill", "prefix_caching", "speculative_decoding",
            "kv_cache_quantization", "weight_quantization", "cuda_graphs", "tensor_parallelism",
            "pipeline_parallelism", "expert_parallelism", "prefill_decode_disaggregation", "kv_cache_offload",
            "multi_lora")


def test_the_vocabulary_holds_every_technique_the_advisor_names():
    assert set(REQUIRED) <= set(technique_names())


def test_words_match_across_hyphens_and_line_breaks_but_not_inside_other_words():
    assert techniques_in_text("stall-free batching with chunked-\nprefills bounds latency") == ["chunked_prefill"]
    assert "multi_lora" not in techniques_in_text("the floral pattern")
    assert techniques_in_text("") == []


def test_a_fact_links_by_its_parameter_when_its_quote_names_no_technique():
    fact = make_fact(parameter="tensor_parallel_size", value="4", unit=None, quote="we use 4 GPUs per model")
    assert techniques_for_fact(fact) == ["tensor_parallelism"]


def test_a_vocabulary_with_an_unknown_key_or_parameter_is_a_load_error(tmp_path):
    bad = tmp_path / "techniques.json"
    good = {"title": "Some technique", "description": "A description long enough to pass.", "words": ["abc"],
            "symptoms": ["slow things"]}
    bad.write_text(json.dumps({"some_technique": {**good, "colour": "red"}}))
    with pytest.raises(TechniqueVocabularyError, match="some_technique"):
        load_techniques(bad)
    bad.write_text(json.dumps({"some_technique": {**good, "parameters": ["no_such_knob"]}}))
    with pytest.raises(TechniqueVocabularyError, match="no_such_knob"):
        load_techniques(bad)


@pytest.mark.django_db
def test_storing_facts_links_them_to_techniques_and_re_extraction_keeps_the_links_right(paper):
    quote = "Chunked prefills split a long prompt so decodes never stall behind it."
    store_facts(paper, [make_fact(kind="trade_off", parameter="chunk_size", value=None, unit=None, quote=quote,
                                  effect="bounded time between tokens")])
    fact = Fact.objects.get()
    assert fact_technique_names(fact) == ["chunked_prefill"]
    assert Technique.objects.filter(name__in=REQUIRED).count() == len(REQUIRED)
    store_facts(paper, [make_fact(kind="trade_off", parameter="chunk_size", value=None, unit=None, quote=quote,
                                  effect="bounded time between tokens, also with a paged KV cache")])
    fact.refresh_from_db()
    assert fact_technique_names(fact) == ["chunked_prefill", "paged_kv_cache"]
    assert FactTechnique.objects.filter(fact=fact, linked_by="extractor").count() == 2


@pytest.mark.django_db
def test_a_person_sets_a_facts_techniques_as_a_revision_and_re_extraction_keeps_it(paper, editor):
    store_facts(paper, [make_fact()])
    fact = Fact.objects.get()
    assert fact_technique_names(fact) == ["paged_kv_cache"]
    set_fact_techniques(fact, editor, ["paged_kv_cache", "prefix_caching"], note="block reuse is prefix sharing")
    revision = fact.revisions.get(action="techniques")
    assert (revision.before, revision.after, revision.user.username) == (
        {"techniques": ["paged_kv_cache"]}, {"techniques": ["paged_kv_cache", "prefix_caching"]}, "editor")
    store_facts(paper, [make_fact()])
    assert fact_technique_names(fact) == ["paged_kv_cache", "prefix_caching"]
    assert set(fact.technique_links.values_list("linked_by", flat=True)) == {"person"}


@pytest.mark.django_db
def test_an_unknown_technique_from_a_person_is_refused_and_changes_nothing(paper, editor):
    store_facts(paper, [make_fact()])
    fact = Fact.objects.get()
    with pytest.raises(FactValidationError, match="warp_drive"):
        set_fact_techniques(fact, editor, ["warp_drive"])
    assert fact_technique_names(fact) == ["paged_kv_cache"]
    assert not fact.revisions.filter(action="techniques").exists()


def test_a_papers_role_comes_from_its_quotes_that_name_the_technique() -> None:
    from ontology.techniques import paper_role

    assert paper_role(["Chunked prefills lower TBT."]) == "mentions"  # one passing mention
    assert paper_role(["Chunked prefills lower TBT.", "Chunked prefills cost little."]) == "evaluates"
    assert paper_role(["In this paper we propose chunked prefills.", "Chunked prefills cost little."]) == "introduces"

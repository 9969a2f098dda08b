"""Entity and parameter pages gather values across papers and flag conflicts."""
from __future__ import annotations

import pytest

from ontology.selectors import conflicts, entity_wiki, live_facts, parameter_wiki
from ontology.services import reject_fact, store_facts
from tests.ontology.conftest import make_fact

pytestmark = pytest.mark.django_db


def test_same_subject_parameter_and_condition_with_different_values_is_a_conflict(paper, other_paper):
    store_facts(paper, [make_fact(condition="ShareGPT")])
    store_facts(other_paper, [make_fact(value="32", quote="block size 32", condition="ShareGPT", page=3)])
    found = conflicts(list(live_facts()))
    assert len(found) == 1
    assert sorted(v["value"] for v in found[0]["values"]) == ["16", "32"]
    assert {v["paper"] for v in found[0]["values"]} == {"2309.06180", "2403.02310"}


def test_different_conditions_or_equal_values_are_not_conflicts(paper, other_paper):
    store_facts(paper, [make_fact(condition="ShareGPT")])
    store_facts(other_paper, [make_fact(value="32", quote="block size 32", condition="Alpaca", page=3),
                              make_fact(value="16.0", quote="block size 16.0", condition="ShareGPT", page=4)])
    assert conflicts(list(live_facts())) == []


def test_the_parameter_page_lists_every_paper_and_the_entity_page_groups_by_parameter(paper, other_paper):
    store_facts(paper, [make_fact(), make_fact(kind="trade_off", value=None, effect="bigger blocks waste memory",
                                               quote="too large blocks fragment", page=12)])
    store_facts(other_paper, [make_fact(value="32", quote="block size 32", page=3)])
    page = parameter_wiki("page size")  # a synonym
    assert page["parameter"] == "block_size" and page["spec"].unit == "tokens"
    assert {f.paper.arxiv_id for f in page["facts"]} == {"2309.06180", "2403.02310"}
    assert len(page["trade_offs"]) == 1 and len(page["conflicts"]) == 1
    entity = entity_wiki("VLLM")
    assert set(entity["facts_by_parameter"]) == {"block_size"} and entity["papers"] == ["2309.06180", "2403.02310"]


def test_rejected_facts_leave_the_pages(paper, other_paper, editor):
    store_facts(paper, [make_fact()])
    store_facts(other_paper, [make_fact(value="32", quote="block size 32", page=3)])
    reject_fact(other_paper.facts.get(), editor)
    page = parameter_wiki("block_size")
    assert [f.value for f in page["facts"]] == ["16"] and page["conflicts"] == []

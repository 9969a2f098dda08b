"""Every change to a fact is a revision; re-extraction never overwrites, removes or duplicates reviewed facts."""
from __future__ import annotations

import pytest

from ontology.models import Fact, FactRevision
from ontology.schema import FactValidationError
from ontology.services import edit_fact, reject_fact, store_facts, verify_fact
from tests.ontology.conftest import make_fact

pytestmark = pytest.mark.django_db


def test_storing_an_extraction_creates_facts_with_a_create_revision(paper):
    counts = store_facts(paper, [make_fact(), make_fact(parameter="gpu_count", kind="constraint", value="8",
                                                       unit="GPUs", quote="OPT-175B, 8 GPUs", page=10)])
    assert counts["created"] == 2
    fact = Fact.objects.get(parameter="block_size")
    assert (fact.value_num, fact.unit, fact.entity.name) == (16.0, "tokens", "vLLM")
    assert list(fact.revisions.values_list("action", "actor")) == [("create", "extractor")]


def test_re_extracting_the_same_facts_changes_nothing(paper):
    store_facts(paper, [make_fact()])
    counts = store_facts(paper, [make_fact()])
    assert counts == {"created": 0, "updated": 0, "kept": 0, "superseded": 0}
    assert Fact.objects.count() == 1 and FactRevision.objects.count() == 1


def test_re_extraction_updates_an_unreviewed_fact_and_records_before_and_after(paper):
    store_facts(paper, [make_fact(confidence=0.5)])
    counts = store_facts(paper, [make_fact(confidence=0.9, condition="default")])
    assert counts["updated"] == 1
    revision = FactRevision.objects.get(action="update")
    assert (revision.before["confidence"], revision.after["confidence"]) == (0.5, 0.9)


def test_verify_and_reject_are_revisions_with_who_and_when(paper, editor):
    store_facts(paper, [make_fact()])
    fact = Fact.objects.get()
    verify_fact(fact, editor, note="matches p.12")
    reject_fact(fact, editor)
    actions = list(fact.revisions.values_list("action", "user__username", "before__status", "after__status"))
    assert actions[1:] == [("verify", "editor", "extracted", "verified"), ("reject", "editor", "verified", "rejected")]
    assert all(r.created_at for r in fact.revisions.all())


def test_an_edit_is_validated_and_recorded_before_and_after(paper, editor):
    store_facts(paper, [make_fact()])
    fact = Fact.objects.get()
    edit_fact(fact, editor, {"value": "32", "condition": "ShareGPT trace"}, note="typo")
    fact.refresh_from_db()
    assert (fact.value, fact.value_num, fact.status) == ("32", 32.0, "verified")
    revision = fact.revisions.get(action="edit")
    assert (revision.before["value"], revision.after["value"], revision.user.username) == ("16", "32", "editor")


def test_an_invalid_edit_names_the_field_and_changes_nothing(paper, editor):
    store_facts(paper, [make_fact()])
    fact = Fact.objects.get()
    with pytest.raises(FactValidationError, match="value: 'huge' is not a number"):
        edit_fact(fact, editor, {"value": "huge"})
    with pytest.raises(FactValidationError, match="fingerprint: cannot be edited"):
        edit_fact(fact, editor, {"fingerprint": "x"})
    fact.refresh_from_db()
    assert fact.value == "16" and not fact.revisions.filter(action="edit").exists()


def test_re_extraction_keeps_a_verified_fact_exactly_as_it_is(paper, editor):
    store_facts(paper, [make_fact()])
    fact = Fact.objects.get()
    verify_fact(fact, editor)
    counts = store_facts(paper, [make_fact(confidence=0.3, condition="changed by the model")])
    fact.refresh_from_db()
    assert counts["kept"] == 1 and fact.confidence == 0.8 and fact.condition == ""
    assert not fact.revisions.filter(action="update").exists()


def test_re_extraction_does_not_duplicate_a_human_edited_fact(paper, editor):
    store_facts(paper, [make_fact()])
    edit_fact(Fact.objects.get(), editor, {"value": "32", "quote": "block size 32"})
    store_facts(paper, [make_fact(value="32", quote="block size 32")])  # the model now finds the edited value
    assert Fact.objects.filter(parameter="block_size").count() == 1


def test_re_extraction_supersedes_stale_machine_facts_and_never_touches_reviewed_ones(paper, editor):
    store_facts(paper, [make_fact(), make_fact(value="32", quote="block size 32")])
    verify_fact(Fact.objects.get(value="32"), editor)
    counts = store_facts(paper, [])
    assert counts["superseded"] == 1
    assert sorted(Fact.objects.values_list("value", "status")) == [("16", "superseded"), ("32", "verified")]
    assert Fact.objects.get(value="16").revisions.latest("id").action == "supersede"
    store_facts(paper, [make_fact()])  # found again: live again
    assert Fact.objects.get(value="16").status == "extracted"


def test_a_rejected_fact_is_not_re_created(paper, editor):
    store_facts(paper, [make_fact()])
    reject_fact(Fact.objects.get(), editor)
    store_facts(paper, [make_fact()])
    assert Fact.objects.get().status == "rejected"

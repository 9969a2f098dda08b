"""export_knowledge -> import_knowledge: a team's reviewed wiki moves to an empty database intact,
a second import changes nothing, and a file's machine facts never overwrite a person's review."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.export import export_knowledge
from knowledge.load import import_knowledge
from ontology.models import Entity, Fact, FactRevision, SearchDocument
from ontology.services import (
    edit_fact,
    fact_technique_names,
    reject_fact,
    set_fact_techniques,
    store_facts,
    verify_fact,
)
from papers.models import Paper, Section
from tests.ontology.conftest import make_fact

pytestmark = pytest.mark.django_db


def _reviewed_wiki(paper, editor) -> None:
    Section.objects.create(paper=paper, order=0, number="4", title="Method", page_start=4, page_end=6, text="body")
    store_facts(paper, [
        make_fact(),
        make_fact(parameter="gpu_count", kind="constraint", value="8", unit="GPUs", quote="OPT-175B, 8 GPUs", page=10),
        make_fact(parameter="chunk_size", value="512", unit="tokens", quote="a chunk size of 512 tokens", page=11),
    ])
    verify_fact(Fact.objects.get(parameter="block_size"), editor, note="checked p.12")
    set_fact_techniques(Fact.objects.get(parameter="block_size"), editor, ["prefix_caching"])
    edit_fact(Fact.objects.get(parameter="gpu_count"), editor, {"value": "4"}, note="table 2 says 4")
    reject_fact(Fact.objects.get(parameter="chunk_size"), editor)


def _history() -> list[tuple]:
    return sorted((r.fact.parameter, r.action, r.actor, r.created_at, r.note) for r in FactRevision.objects.all())


def _empty_database() -> None:
    Paper.objects.all().delete()
    Entity.objects.all().delete()


def test_an_export_imported_into_an_empty_database_keeps_reviews_and_history(paper, editor, tmp_path: Path) -> None:
    _reviewed_wiki(paper, editor)
    facts_before = sorted(Fact.objects.values_list("parameter", "value", "status", "fingerprint", "quote"))
    history_before = _history()
    path = tmp_path / "wiki.jsonl.gz"
    assert export_knowledge(path) == 1
    _empty_database()
    assert not Fact.objects.exists()

    report = import_knowledge(path)

    assert not report.errors and report.papers_created == 1 and report.facts["created"] == 3
    assert sorted(Fact.objects.values_list("parameter", "value", "status", "fingerprint", "quote")) == facts_before
    assert _history() == history_before
    verify = FactRevision.objects.get(action="verify")
    assert verify.user.username == "editor"  # the person exists here, so the revision points at them
    assert Section.objects.get(paper__arxiv_id=paper.arxiv_id).title == "Method"
    assert fact_technique_names(Fact.objects.get(parameter="block_size")) == ["prefix_caching"]  # a person's choice
    searchable = SearchDocument.objects.filter(doc_type="fact").values_list("fact__parameter", flat=True)
    assert sorted(searchable) == ["block_size", "gpu_count"]  # at once, and without the rejected fact


def test_a_second_import_changes_nothing(paper, editor, tmp_path: Path) -> None:
    _reviewed_wiki(paper, editor)
    path = tmp_path / "wiki.jsonl"
    export_knowledge(path)
    _empty_database()
    import_knowledge(path)
    counts = (Fact.objects.count(), FactRevision.objects.count(), SearchDocument.objects.count())
    report = import_knowledge(path)
    assert (report.papers_unchanged, report.facts["created"], report.facts["reviewed"]) == (1, 0, 0)
    assert (Fact.objects.count(), FactRevision.objects.count(), SearchDocument.objects.count()) == counts


def test_re_extraction_after_an_import_keeps_the_edited_fact(paper, editor, tmp_path: Path) -> None:
    _reviewed_wiki(paper, editor)
    path = tmp_path / "wiki.jsonl"
    export_knowledge(path)
    _empty_database()
    import_knowledge(path)
    moved = Paper.objects.get(arxiv_id=paper.arxiv_id)
    counts = store_facts(moved, [make_fact(parameter="gpu_count", kind="constraint", value="8", unit="GPUs",
                                           quote="OPT-175B, 8 GPUs", page=10)])
    assert counts["kept"] == 1
    assert Fact.objects.get(parameter="gpu_count").value == "4"


def test_a_files_machine_fact_never_overwrites_a_review_here(paper, editor, tmp_path: Path) -> None:
    store_facts(paper, [make_fact()])
    path = tmp_path / "machine.jsonl"
    export_knowledge(path)  # the fact as the extractor left it
    fact = Fact.objects.get()
    edit_fact(fact, editor, {"condition": "ShareGPT trace"})
    report = import_knowledge(path)
    fact.refresh_from_db()
    assert report.facts["kept"] == 1 and (fact.status, fact.condition) == ("verified", "ShareGPT trace")


def test_a_files_review_is_taken_by_an_unreviewed_fact_here(paper, editor, tmp_path: Path) -> None:
    store_facts(paper, [make_fact()])
    verify_fact(Fact.objects.get(), editor)
    path = tmp_path / "reviewed.jsonl"
    export_knowledge(path)
    Fact.objects.all().delete()
    store_facts(paper, [make_fact()])  # this instance extracted the same fact, unreviewed
    report = import_knowledge(path)
    assert report.facts["reviewed"] == 1
    assert Fact.objects.get().status == "verified"


def test_a_bad_line_is_reported_and_the_rest_still_loads(paper, editor, tmp_path: Path) -> None:
    _reviewed_wiki(paper, editor)
    path = tmp_path / "wiki.jsonl"
    export_knowledge(path)
    header, line = path.read_text().splitlines()
    path.write_text("\n".join([header, '{"type": "paper", "arxiv_id": "x"}', line]) + "\n")
    _empty_database()
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_knowledge", str(path))
    assert Fact.objects.count() == 3


def test_a_file_that_is_not_a_knowledge_file_says_what_it_expected(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"hello": 1}\n'))
    with pytest.raises(CommandError, match="not an InfraWiki knowledge file"):
        call_command("import_knowledge", str(path))

"""The starter knowledge pack: small, without full text, reproducible from the corpus PDFs, and
loaded by `make run` idempotently without ever overwriting a person's review."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from knowledge.pack import PACK_FILE, PACK_ORIGIN, load_pack, paper_record
from knowledge.records import PaperRecord, read_file, write_file
from knowledge.sources import default_folders, known_papers
from ontology.models import Fact, FactRevision, SearchDocument
from ontology.schema import MAX_QUOTE
from ontology.services import edit_fact
from papers.models import Paper, Score
from papers.selectors import seed_entries

SAMPLE = ("2401.08671", "2407.15309")  # two of the quicker corpus PDFs to rebuild


def _pack() -> tuple[object, dict[str, PaperRecord]]:
    header, lines = read_file(PACK_FILE)
    records = {}
    for _, record in lines:
        assert not isinstance(record, str), record
        records[record.arxiv_id] = record
    return header, records


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_pack_is_small_and_carries_short_quotes_not_the_papers_text() -> None:
    assert PACK_FILE.stat().st_size < 5 * 1024 * 1024
    _, records = _pack()
    assert len(records) >= 10 and all(record.facts and record.score for record in records.values())
    for record in records.values():
        assert all(len(fact.quote) <= MAX_QUOTE for fact in record.facts)
        # Everything but the arXiv abstract is an excerpt: no string the length of a section's text.
        longest = max(len(s) for s in _strings(record.model_dump(mode="json", exclude={"abstract"})))
        assert longest <= 2000, (record.arxiv_id, longest)
    assert (PACK_FILE.parent / "SOURCES.md").is_file()


def test_rebuilding_from_the_corpus_reproduces_the_packs_rule_extracted_facts(corpus_dir: Path) -> None:
    header, records = _pack()
    seed = seed_entries()
    folder = next(f for f in default_folders() if f.folder == corpus_dir / "pdfs")
    for arxiv_id in SAMPLE:
        rebuilt = paper_record(folder.folder / f"{arxiv_id}.pdf", seed, header.as_of, folder=folder,
                               known=known_papers(seed))
        shipped = records[arxiv_id]
        rules = [f for f in shipped.facts if f.extractor.startswith("rules")]
        assert [f for f in rebuilt.facts if f.extractor.startswith("rules")] == rules, (
            f"the pack is out of date for {arxiv_id}: run python manage.py build_knowledge_pack")
        assert rebuilt == shipped


@pytest.fixture
def sample_pack(tmp_path: Path) -> Path:
    """The shipped pack cut to two papers (embedding every fact of all of them is slow on a CPU)."""
    header, records = _pack()
    path = tmp_path / "sample.jsonl.gz"
    write_file(path, header, [records[arxiv_id] for arxiv_id in SAMPLE])
    return path


@pytest.mark.django_db
def test_loading_the_pack_makes_its_papers_readable_and_searchable_at_once(sample_pack: Path) -> None:
    report = load_pack(sample_pack)
    assert not report.errors and report.papers_created == 2
    paper = Paper.objects.get(arxiv_id="2401.08671")
    assert paper.status == Paper.Status.EXTRACTED and not paper.pdf_path and paper.sections.exists()
    facts = Fact.objects.filter(paper=paper)
    assert facts.exists() and set(facts.values_list("status", flat=True)) == {"extracted"}  # machine facts
    assert set(FactRevision.objects.filter(fact__paper=paper).values_list("actor", flat=True)) == {PACK_ORIGIN}
    assert SearchDocument.objects.filter(paper=paper, doc_type="paper").exists()
    assert SearchDocument.objects.filter(paper=paper, doc_type="fact").count() == facts.count()
    assert Score.objects.get(paper=paper, is_latest=True).source == Score.Source.IMPORTED


@pytest.mark.django_db
def test_a_second_load_changes_nothing_and_a_rescore_keeps_the_packs_score(sample_pack: Path) -> None:
    load_pack(sample_pack)
    counts = (Fact.objects.count(), FactRevision.objects.count(), SearchDocument.objects.count(), Score.objects.count())
    report = load_pack(sample_pack)
    call_command("score_papers")
    assert report.papers_unchanged == 2 and report.facts["created"] == 0
    assert (Fact.objects.count(), FactRevision.objects.count(), SearchDocument.objects.count(),
            Score.objects.count()) == counts


@pytest.mark.django_db
def test_a_persons_edit_survives_a_reload_of_the_pack(sample_pack: Path, django_user_model) -> None:
    load_pack(sample_pack)
    editor = django_user_model.objects.create_user("editor", password="pw-editor-123")
    fact = Fact.objects.filter(paper__arxiv_id="2401.08671").first()
    edit_fact(fact, editor, {"condition": "checked against the PDF"})
    load_pack(sample_pack)
    fact.refresh_from_db()
    assert (fact.status, fact.condition) == ("verified", "checked against the PDF")

"""Every store path indexes what it stores: a paper is found by `search` the moment it is stored,
with no reindex step (load_seed, ingest_pdf of every corpus PDF)."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from ontology.models import SearchDocument
from papers.models import Paper

# with the other corpus ingests on one worker: the second ingest of a text reads its embedding from the cache
pytestmark = [pytest.mark.xdist_group("corpus-ingest"), pytest.mark.fills_cache]


def _search(query: str, capsys, limit: int = 5) -> list[dict]:
    capsys.readouterr()
    call_command("search", query, "--json", "--limit", str(limit))
    return json.loads(capsys.readouterr().out)["results"]


@pytest.mark.django_db
def test_seed_papers_are_searchable_as_soon_as_they_are_loaded(capsys) -> None:
    call_command("load_seed", verbosity=0)
    assert SearchDocument.objects.filter(doc_type="paper").count() == Paper.objects.count()
    hits = _search("efficient memory management PagedAttention", capsys)
    assert "2309.06180" in [hit["paper"] for hit in hits]


@pytest.mark.slow
@pytest.mark.django_db
def test_every_corpus_pdf_ingests_and_is_found_by_its_title_at_once(corpus_pdfs, data_dir, capsys) -> None:
    for arxiv_id, path in corpus_pdfs.items():
        capsys.readouterr()
        # named by the operator: three corpus PDFs carry no arXiv stamp, and a file name is never an identity
        call_command("ingest_pdf", str(path), "--arxiv-id", arxiv_id, "--json")
        assert json.loads(capsys.readouterr().out)["paper"]["arxiv_id"] == arxiv_id
    assert Paper.objects.filter(status=Paper.Status.PARSED).count() == len(corpus_pdfs) >= 13
    missed = {}
    for paper in Paper.objects.all():
        found = [hit["paper"] for hit in _search(paper.title, capsys)]
        if paper.arxiv_id not in found:
            missed[paper.arxiv_id] = (paper.title, found)
    assert not missed, missed

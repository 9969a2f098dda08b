"""Paper identity: an arXiv id read from a PDF is a hint, never a key that overwrites another paper."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from papers.models import IdentityConflict, Paper, PaperPage, PipelineEvent
from papers.services.pdfs import ingest_pdf_file
from tests.papers.pdfs import SERVING_TEXT, text_pdf

VLLM = "2309.06180"
VLLM_TITLE = "Efficient Memory Management for Large Language Model Serving with PagedAttention"
OTHER = ("A Survey of Garden Irrigation Scheduling. We study drip irrigation for tomato beds and compare "
         f"watering schedules; an unrelated preprint (arXiv:{VLLM}) is cited for its queueing ideas. " * 4)


@pytest.fixture
def vllm(db) -> Paper:
    return Paper.objects.create(arxiv_id=VLLM, version=1, title=VLLM_TITLE, abstract="PagedAttention ...",
                                pdf_sha256="ab" * 32, pdf_path="/stored/vllm.pdf", status=Paper.Status.EXTRACTED)


def _snapshot(paper: Paper) -> tuple:
    paper.refresh_from_db()
    return paper.title, paper.abstract, paper.pdf_sha256, paper.pdf_path, paper.status, paper.version


def test_a_pdf_about_something_else_naming_vllm_does_not_touch_the_vllm_paper(tmp_path, data_dir, vllm) -> None:
    before = _snapshot(vllm)
    ingested = ingest_pdf_file(text_pdf(tmp_path / "garden.pdf", OTHER, title="A Survey of Garden Irrigation"))
    assert _snapshot(vllm) == before
    assert not PaperPage.objects.filter(paper=vllm).exists() and not vllm.sections.exists()
    other = ingested.paper
    assert other.pk != vllm.pk and other.arxiv_id.startswith("sha256:") and other.title.startswith("A Survey")
    conflict = IdentityConflict.objects.get()
    assert (conflict.paper, conflict.claimed, conflict.hint_source, conflict.resolved) == (other, vllm, "stamp", False)
    assert "not the stored title" in conflict.reason
    assert PipelineEvent.objects.filter(paper=vllm, stage="identity", level="error").exists()


def test_a_seed_entry_without_a_pdf_is_protected_by_its_title_too(tmp_path, data_dir, db) -> None:
    seed = Paper.objects.create(arxiv_id=VLLM, version=0, title=VLLM_TITLE)
    ingest_pdf_file(text_pdf(tmp_path / "garden.pdf", OTHER, title="A Survey of Garden Irrigation"))
    seed.refresh_from_db()
    assert seed.title == VLLM_TITLE and not seed.pdf_sha256 and seed.status == Paper.Status.NEW
    assert IdentityConflict.objects.filter(claimed=seed).count() == 1


def test_the_same_paper_under_its_own_id_is_filled_in(tmp_path, data_dir, db) -> None:
    seed = Paper.objects.create(arxiv_id="2401.00001", version=0, title="Sys: fast serving for LLMs")
    stamped = SERVING_TEXT + " arXiv:2401.00001v1 [cs.DC] 1 Jan 2024"
    paper = ingest_pdf_file(text_pdf(tmp_path / "sys.pdf", stamped, title="Sys: fast serving")).paper
    assert paper.pk == seed.pk and paper.pdf_sha256 and not IdentityConflict.objects.exists()


def test_a_file_name_id_is_a_hint_and_a_title_finds_a_stored_paper(tmp_path, data_dir, db) -> None:
    named = Paper.objects.create(arxiv_id="2401.00002", version=0, title="Sys: fast serving")
    assert ingest_pdf_file(text_pdf(tmp_path / "2401.00002v2.pdf", SERVING_TEXT, title="Sys: fast serving")
                           ).paper.pk == named.pk
    titled = Paper.objects.create(arxiv_id="2401.00003", version=0, title="Chunky: prefill in pieces for LLMs")
    found = ingest_pdf_file(text_pdf(tmp_path / "paper.pdf", SERVING_TEXT + " Chunky",
                                     title="Chunky: Prefill in Pieces for LLMs"))
    assert found.paper.pk == titled.pk and found.identity.source == "title"


def test_a_different_pdf_for_a_paper_that_has_one_is_held_apart(tmp_path, data_dir, db) -> None:
    first = ingest_pdf_file(text_pdf(tmp_path / "a.pdf", SERVING_TEXT, title="Sys: fast serving"),
                            arxiv_id="2401.00004").paper
    again = ingest_pdf_file(text_pdf(tmp_path / "2401.00004.pdf", SERVING_TEXT + " Revised.", title="Sys: fast serving"))
    assert again.paper.pk != first.pk
    assert "another PDF" in IdentityConflict.objects.get(claimed=first).reason


def test_an_over_long_arxiv_id_on_the_command_line_is_a_clean_user_error(tmp_path, data_dir, db) -> None:
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving")
    with pytest.raises(CommandError, match="not an arXiv id"):
        call_command("ingest_pdf", str(pdf), "--arxiv-id", "9" * 60)
    assert not Paper.objects.exists() and not (data_dir / "pdfs").exists()


def test_the_conflict_waits_on_the_review_page_and_in_the_admin(tmp_path, data_dir, vllm, admin_client) -> None:
    other = ingest_pdf_file(text_pdf(tmp_path / "garden.pdf", OTHER, title="A Survey of Garden Irrigation")).paper
    page = Client().get("/review/").content.decode()
    assert "PDFs held apart" in page and f"/papers/{other.arxiv_id}/" in page and f"arXiv:{VLLM}" in page
    listing = admin_client.get("/admin/papers/identityconflict/").content.decode()
    assert "Garden Irrigation" in listing and "not the stored title" in listing


def test_an_old_style_id_works_in_every_command_page_and_api_route(tmp_path, data_dir, db, capsys) -> None:
    import json

    old = "astro-ph/0601001"
    path = text_pdf(tmp_path / "old.pdf", SERVING_TEXT, title="Sys: fast serving")
    call_command("ingest_pdf", str(path), "--arxiv-id", old, "--json")
    assert json.loads(capsys.readouterr().out)["paper"]["arxiv_id"] == old
    for command in (["extract_papers", old, "--no-llm"], ["score_papers"], ["reindex_search"]):
        call_command(*command)
    assert "error" not in capsys.readouterr().err.lower()
    call_command("search", "Sys fast serving", "--json")
    assert old in [hit["paper"] for hit in json.loads(capsys.readouterr().out)["results"]]
    client = Client()
    for url in (f"/papers/{old}/", f"/api/papers/{old}/", "/papers/", "/"):
        assert client.get(url).status_code == 200, url
    assert Paper.objects.get(arxiv_id=old).facts.exists()

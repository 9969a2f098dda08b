"""Paper identity: a PDF's own id is its arXiv margin stamp, its DOI or its title; an id anywhere else
is a question for a person, never a key that overwrites another paper."""
from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from ontology.models import Fact
from ontology.services import verify_fact
from papers.models import IdentityConflict, Paper, PaperPage, PipelineEvent
from papers.pdf import parse_pdf
from papers.services.pdfs import ingest_pdf_file
from tests.conftest import require
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
    assert (conflict.paper, conflict.claimed, conflict.hint_source, conflict.resolved) == (other, vllm, "text", False)
    assert "not in an arXiv stamp" in conflict.reason and VLLM_TITLE[:40] in conflict.reason
    assert PipelineEvent.objects.filter(paper=vllm, stage="identity", level="error").exists()


def test_a_seed_entry_without_a_pdf_is_protected_by_its_title_too(tmp_path, data_dir, db) -> None:
    seed = Paper.objects.create(arxiv_id=VLLM, version=0, title=VLLM_TITLE)
    ingest_pdf_file(text_pdf(tmp_path / "garden.pdf", OTHER, title="A Survey of Garden Irrigation"))
    seed.refresh_from_db()
    assert seed.title == VLLM_TITLE and not seed.pdf_sha256 and seed.status == Paper.Status.NEW
    assert IdentityConflict.objects.filter(claimed=seed).count() == 1


def test_the_same_paper_under_its_own_id_is_filled_in(tmp_path, data_dir, db) -> None:
    seed = Paper.objects.create(arxiv_id="2401.00001", version=0, title="Sys: fast serving for LLMs")
    paper = ingest_pdf_file(text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving",
                                     stamp="arXiv:2401.00001v2  [cs.DC]  1 Jan 2024")).paper
    assert paper.pk == seed.pk and paper.pdf_sha256 and not IdentityConflict.objects.exists()
    assert paper.version == 2


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
    assert "already has a reading" in IdentityConflict.objects.get(claimed=first).reason


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
    assert "Garden Irrigation" in listing and "not in an arXiv stamp" in listing


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


SURVEY_TITLE = "A Survey of Request Scheduling in Model Serving"
SURVEY = ("Abstract. We review how serving systems schedule requests, batch them and place their caches, and "
          "sort the published systems by what they optimise. " * 3 + "References. [1] W. Kwon, Z. Li, S. Zhuang et al. "
          f"{VLLM_TITLE}. arXiv:{VLLM}, 2023. [2] A. Agrawal et al. Taming throughput-latency tradeoff in LLM "
          "inference with Sarathi-Serve. arXiv:2403.02310, 2024.")




def test_an_uploaded_survey_citing_a_starter_paper_is_stored_as_itself_and_held_for_review(
        tmp_path, data_dir, editor) -> None:
    starter = Paper.objects.create(arxiv_id=VLLM, version=0, title=VLLM_TITLE)  # a seed entry without a PDF yet
    pdf = text_pdf(tmp_path / "survey.pdf", SURVEY, title=SURVEY_TITLE).read_bytes()
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("survey.pdf", pdf)})
    assert response.status_code == 302
    starter.refresh_from_db()
    assert (starter.title, starter.pdf_sha256, starter.status) == (VLLM_TITLE, "", Paper.Status.NEW)
    assert not starter.pages.exists() and not starter.sections.exists()
    survey = Paper.objects.get(title=SURVEY_TITLE)
    assert survey.arxiv_id.startswith("sha256:") and response["Location"] == f"/papers/{survey.arxiv_id}/"
    conflict = IdentityConflict.objects.get(claimed=starter)
    assert conflict.paper == survey and conflict.hint_source == "text"
    page = editor.get("/review/").content.decode()
    assert SURVEY_TITLE in page and VLLM_TITLE[:60] in page and "Accept as arXiv:" in page


def test_a_stamp_on_a_pdf_whose_title_disagrees_is_held_not_merged(tmp_path, data_dir, vllm) -> None:
    stamped = text_pdf(tmp_path / "garden.pdf", OTHER, title="A Survey of Garden Irrigation",
                       stamp=f"arXiv:{VLLM}v3  [cs.LG]  1 Mar 2024")
    before = _snapshot(vllm)
    ingested = ingest_pdf_file(stamped)
    assert _snapshot(vllm) == before and ingested.paper.arxiv_id.startswith("sha256:")
    conflict = IdentityConflict.objects.get(claimed=vllm)
    assert conflict.hint_source == "stamp" and "titles differ" in conflict.reason and "Garden Irrigation" in conflict.reason


def test_an_id_in_the_text_of_page_1_never_makes_a_new_paper_under_that_id(tmp_path, data_dir, db) -> None:
    ingested = ingest_pdf_file(text_pdf(tmp_path / "survey.pdf", SURVEY, title=SURVEY_TITLE))
    assert ingested.paper.arxiv_id.startswith("sha256:") and not Paper.objects.filter(arxiv_id=VLLM).exists()
    assert not IdentityConflict.objects.exists()  # nothing stored was named: nothing to ask about


def test_the_pdfs_own_doi_finds_its_stored_paper_and_a_cited_doi_takes_nothing_over(tmp_path, data_dir, db) -> None:
    stored = Paper.objects.create(arxiv_id="2401.00007", version=0, title="Sys: fast serving for LLMs",
                                  doi="10.1145/3600006.1234567")
    own = ingest_pdf_file(text_pdf(tmp_path / "sys.pdf", "DOI: 10.1145/3600006.1234567. " + SERVING_TEXT,
                                   title="Sys: fast serving"))
    assert own.identity.source == "doi" and own.paper.pk == stored.pk  # the title alone (0.6) would not do
    citing = ingest_pdf_file(text_pdf(tmp_path / "garden.pdf", OTHER + " See https://doi.org/10.1145/3600006.1234567.",
                                      title="A Survey of Garden Irrigation"))
    assert citing.paper.pk != stored.pk and citing.paper.arxiv_id.startswith("sha256:")
    stored.refresh_from_db()
    assert stored.pdf_sha256 == own.paper.pdf_sha256 and IdentityConflict.objects.get(claimed=stored).paper == citing.paper


def _read_stamped(tmp_path: Path, name: str, text: str, version: int) -> Paper:
    pdf = text_pdf(tmp_path / name, text, title="Sys: fast serving", stamp=f"arXiv:2401.00005v{version}  [cs.DC]  1 Jan 2024")
    return ingest_pdf_file(pdf).paper


def test_a_new_pdf_for_a_read_paper_keeps_the_old_reading_until_an_editor_accepts_it(
        tmp_path, data_dir, editor, memory_broker) -> None:
    stored = _read_stamped(tmp_path, "v1.pdf", SERVING_TEXT, 1)
    call_command("extract_papers", stored.arxiv_id, "--no-llm")
    facts = set(Fact.objects.filter(paper=stored).values_list("pk", flat=True))
    pages = list(stored.pages.values_list("text", flat=True))
    assert facts and pages
    held = _read_stamped(tmp_path, "v2.pdf", SERVING_TEXT.replace("16 tokens", "32 tokens"), 2)
    assert held.pk != stored.pk
    stored.refresh_from_db()
    assert list(stored.pages.values_list("text", flat=True)) == pages and stored.version == 1
    assert set(Fact.objects.filter(paper=stored).values_list("pk", flat=True)) == facts
    conflict = IdentityConflict.objects.get(claimed=stored, paper=held)
    url = f"/review/identity/{conflict.pk}/accept/"
    assert Client().post(url).status_code == 302 and IdentityConflict.objects.filter(pk=conflict.pk).exists()
    response = editor.post(url)
    assert response.status_code == 302 and response["Location"] == f"/papers/{stored.arxiv_id}/"
    stored.refresh_from_db()
    assert "32 tokens" in stored.pages.get().text and stored.version == 2 and stored.pdf_sha256 == held.pdf_sha256
    assert not Paper.objects.filter(pk=held.pk).exists() and not IdentityConflict.objects.exists()
    assert set(Fact.objects.filter(paper=stored).values_list("pk", flat=True)) == facts  # until re-extraction runs
    with memory_broker.connection_for_write() as conn:
        assert conn.SimpleQueue("extract").get(block=False).headers["task"] == "papers.tasks.extract_paper_task"


def test_accepting_is_refused_when_a_person_reviewed_facts_of_the_held_copy(tmp_path, data_dir, editor) -> None:
    stored = _read_stamped(tmp_path, "v1.pdf", SERVING_TEXT, 1)
    held = _read_stamped(tmp_path, "v2.pdf", SERVING_TEXT.replace("16 tokens", "32 tokens"), 2)
    call_command("extract_papers", held.arxiv_id, "--no-llm")
    verify_fact(Fact.objects.filter(paper=held).first(), user=User.objects.get(username="editor"))
    conflict = IdentityConflict.objects.get(claimed=stored)
    response = editor.post(f"/review/identity/{conflict.pk}/accept/", follow=True)
    assert "Not accepted" in response.content.decode() and "reviewed by a person" in response.content.decode()
    assert Paper.objects.filter(pk=held.pk).exists() and "16 tokens" in stored.pages.get().text


def _margin_text(path: Path) -> str:
    """Page 1's left tenth as plain text: where arXiv prints its stamp (read by clip, not by direction)."""
    with pymupdf.open(path) as doc:
        page = doc[0]
        return page.get_text(clip=pymupdf.Rect(0, 0, page.rect.width * 0.1, page.rect.height))


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["pdfs", "pdfs_extra"])
def test_corpus_pdfs_are_identified_by_their_stamp_and_unstamped_ones_get_no_id(folder, corpus_dir) -> None:
    corpus = corpus_dir / folder
    require(corpus.is_dir(), f"the shared corpus folder {corpus}")
    stamped = unstamped = 0
    for path in sorted(corpus.glob("*.pdf")):
        margin = re.search(r"arXiv:(\d{4}\.\d{4,5})v(\d+)", _margin_text(path))
        parsed = parse_pdf(path, detect_tables=False)
        if margin:
            stamped += 1
            assert (parsed.arxiv_id, parsed.arxiv_version) == (margin.group(1), int(margin.group(2))), path.name
            if folder == "pdfs":
                assert parsed.arxiv_id == path.stem, path.name
        else:
            unstamped += 1
            assert parsed.arxiv_id is None, path.name
    assert stamped and unstamped  # both kinds are in each folder, so both rules were exercised

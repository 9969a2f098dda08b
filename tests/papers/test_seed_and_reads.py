"""The bundled seed list loads offline and idempotently; selectors read what services wrote; the
admin shows every papers model."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from papers import selectors
from papers.arxiv_ids import parse
from papers.links import arxiv_ids, github_repos
from papers.models import CodeRepo, Paper, PaperRepo
from papers.services.seed import SEED_FILE

pytestmark = pytest.mark.django_db


def test_the_seed_list_is_real_and_self_contained() -> None:
    entries = json.loads(SEED_FILE.read_text())["papers"]
    ids = [e["arxiv_id"] for e in entries]
    assert len(ids) == len(set(ids)) >= 200
    assert {"2309.06180", "2311.03285", "2401.09670"} <= set(ids)
    assert all(e["title"] and e["sources"] for e in entries)
    assert sum(1 for e in entries if e["abstract"]) == 13  # the corpus PDFs, nothing invented


def test_load_seed_is_idempotent_and_links_code(capsys) -> None:
    call_command("load_seed")
    assert "created" in capsys.readouterr().out
    papers, links = Paper.objects.count(), PaperRepo.objects.count()
    call_command("load_seed")
    assert "0 created" in capsys.readouterr().out
    assert (Paper.objects.count(), PaperRepo.objects.count()) == (papers, links)
    vllm = Paper.objects.get(arxiv_id="2309.06180")
    assert vllm.version == 0 and "PagedAttention" in vllm.abstract
    assert PaperRepo.objects.filter(paper=vllm, repo__full_name="vllm-project/vllm", source="seed").exists()


def test_load_seed_never_overwrites_what_a_crawl_or_person_wrote() -> None:
    Paper.objects.create(arxiv_id="2309.06180", version=2, title="edited by a person", abstract="kept")
    call_command("load_seed")
    paper = Paper.objects.get(arxiv_id="2309.06180")
    assert (paper.version, paper.title, paper.abstract) == (2, "edited by a person", "kept")


def test_code_links_and_arxiv_ids_are_found_in_text() -> None:
    text = "The code is available at: https:// github.com/hao-ai-lab/MuxServe. See https://github.com/S-LoRA/S-LoRA."
    assert github_repos(text) == ["hao-ai-lab/MuxServe", "S-LoRA/S-LoRA"]
    assert arxiv_ids("arXiv:2309.06180v2, https://arxiv.org/abs/2401.09670") == ["2309.06180", "2401.09670"]
    assert parse("2204.08348v3") == ("2204.08348", 3) and parse("2204.08348") == ("2204.08348", 1)


def test_selectors_list_detail_and_status_counts(django_assert_max_num_queries) -> None:
    Paper.objects.create(arxiv_id="1", title="KV cache paging", status=Paper.Status.PARSED)
    Paper.objects.create(arxiv_id="2", title="Speculative decoding", status=Paper.Status.FAILED,
                         failure_stage="parse", failure_reason="corrupt")
    assert [p.arxiv_id for p in selectors.paper_list(search="kv cache")] == ["1"]
    assert [p.arxiv_id for p in selectors.paper_list(status="failed")] == ["2"]
    counts = selectors.pipeline_counts()
    assert counts["parsed"] == 1 and counts["failed"] == 1 and counts["new"] == 0
    assert [p.failure_reason for p in selectors.failed_papers()] == ["corrupt"]
    with django_assert_max_num_queries(6):
        paper = selectors.paper_detail("1")
        assert list(paper.sections.all()) == [] and list(paper.repos.all()) == []
    assert selectors.paper_detail("nope") is None


def test_the_admin_lists_every_papers_model(admin_client) -> None:
    paper = Paper.objects.create(arxiv_id="2309.06180", title="vLLM")
    CodeRepo.objects.create(full_name="vllm-project/vllm")
    for model in ("paper", "author", "paperauthor", "coderepo", "paperrepo", "section", "table", "pipelineevent"):
        assert admin_client.get(reverse(f"admin:papers_{model}_changelist")).status_code == 200, model
    assert admin_client.get(reverse("admin:papers_paper_change", args=[paper.pk])).status_code == 200

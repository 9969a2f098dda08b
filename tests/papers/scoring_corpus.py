"""Test helpers that turn the shared corpus into scoring inputs and database rows.

Real data only: paper metadata from corpus/papers.jsonl, PDF text from corpus/pdfs (PyMuPDF),
repository health from the recorded GitHub API responses (PyGithub's recordings: no LLM-infra
repository was recorded, see corpus/SOURCES.md "Gaps"), parameter facts from eval/gold_facts_dev.jsonl.
"""
from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import pymupdf

from papers.models import CodeRepo, Paper, PaperRepo, Section
from papers.scoring.inputs import FactInput, RepoInput, TextPart

GITHUB = "github_api"
REPO_PYGITHUB = "Repository.setUp__01__GET_repos_PyGithub_PyGithub.json"
WORKFLOWS_PYGITHUB = "Repository.testGetWorkflows__02__GET_repos_PyGithub_PyGithub_actions_workflows.json"
ISSUES_PYGITHUB = "Repository.testGetIssues__01__GET_repos_PyGithub_PyGithub_issues.json"
REPO_COMPAREA = "Repository.testGetStargazersWithDates__02__GET_repos_danvk_comparea.json"
SEARCH_ISSUES = "Search.testSearchIssues__01__GET_search_issues.json"


def recorded(corpus_dir: Path, name: str) -> dict | list:
    return json.loads((corpus_dir / GITHUB / name).read_text())


def github_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def repo_fields(repo: dict, workflows: dict | None = None, issues: list | None = None) -> dict:
    """CodeRepo/RepoInput fields from a recorded `GET /repos/{owner}/{name}` body (+ workflows, issues)."""
    names = [w["name"] for w in (workflows or {}).get("workflows", [])]
    return {
        "full_name": repo["full_name"], "html_url": repo["html_url"], "stars": repo["stargazers_count"],
        "forks": repo["forks_count"], "open_issues": repo["open_issues_count"],
        "pushed_at": github_time(repo["pushed_at"]), "license_spdx": (repo.get("license") or {}).get("spdx_id", ""),
        "archived": bool(repo.get("archived")), "has_ci": bool(names) if workflows is not None else None,
        "workflows": names, "issues": issues or [],
    }


def repo_input(corpus_dir: Path, repo: str = REPO_PYGITHUB, *, workflows: str | None = WORKFLOWS_PYGITHUB,
               issues: str | None = None, **overrides) -> RepoInput:
    fields = repo_fields(recorded(corpus_dir, repo), recorded(corpus_dir, workflows) if workflows else None,
                         _issue_list(recorded(corpus_dir, issues)) if issues else None)
    fields.update(overrides)
    fields["workflows"], fields["issues"] = tuple(fields["workflows"]), tuple(fields["issues"])
    return RepoInput(**fields)


def _issue_list(body: dict | list) -> list[dict]:
    return body["items"] if isinstance(body, dict) else body


# PDFs in corpus/pdfs whose papers are not in papers.jsonl: titles as corpus/SOURCES.md gives them.
PDF_ONLY_TITLES = {
    "2403.02310": "Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve",
    "2407.00079": "Mooncake: A KVCache-centric Disaggregated Architecture for LLM Serving",
    "2408.04275": "DistTrain: Addressing Model and Data Heterogeneity with Disaggregated Training for "
                  "Multimodal Large Language Models",
}


def paper_meta(corpus_dir: Path, arxiv_id: str) -> dict:
    """The papers.jsonl row, or title-only metadata for the PDFs the list does not hold."""
    for line in (corpus_dir / "papers.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["arxiv_id"] == arxiv_id:
            return row
    return {"arxiv_id": arxiv_id, "title": PDF_ONLY_TITLES[arxiv_id], "code_url": None}


@lru_cache(maxsize=16)
def _pages(pdf_path: str) -> tuple[str, ...]:
    with pymupdf.open(pdf_path) as doc:
        return tuple(page.get_text() for page in doc)


def pdf_pages(corpus_dir: Path, arxiv_id: str) -> tuple[str, ...]:
    return _pages(str(corpus_dir / "pdfs" / f"{arxiv_id}.pdf"))


def page_parts(corpus_dir: Path, arxiv_id: str) -> tuple[TextPart, ...]:
    return tuple(TextPart("page", text, number) for number, text in enumerate(pdf_pages(corpus_dir, arxiv_id), 1))


def gold_parameter_facts(shared_dir: Path, arxiv_id: str) -> list[dict]:
    rows = (json.loads(line) for line in (shared_dir / "eval" / "gold_facts_dev.jsonl").read_text().splitlines())
    return [row for row in rows if row["paper"] == arxiv_id and row["kind"] == "parameter"]


def fact_inputs(facts: list[dict]) -> tuple[FactInput, ...]:
    return tuple(
        FactInput(parameter=f["parameter"], value="" if f["value"] is None else str(f["value"]), unit=f["unit"] or "",
                  subject=f["subject"], page=f["page"], quote=f["quote"])
        for f in facts
    )


def paper_in_db(corpus_dir: Path, arxiv_id: str, *, pdf: bool = False) -> Paper:
    """A Paper row from the corpus metadata; with `pdf`, one Section per PDF page (real text)."""
    meta = paper_meta(corpus_dir, arxiv_id)
    paper = Paper.objects.create(arxiv_id=arxiv_id, title=meta["title"],
                                 code_urls=[meta["code_url"]] if meta["code_url"] else [])
    if pdf:
        Section.objects.bulk_create(
            Section(paper=paper, order=n, title=f"page {n}", page_start=n, page_end=n, text=text)
            for n, text in enumerate(pdf_pages(corpus_dir, arxiv_id), 1)
        )
    return paper


def link_recorded_repo(corpus_dir: Path, paper: Paper) -> CodeRepo:
    """The recorded PyGithub repository (with workflows, and the recorded issue search as its
    production signals) linked to `paper` as its official code."""
    fields = repo_fields(recorded(corpus_dir, REPO_PYGITHUB), recorded(corpus_dir, WORKFLOWS_PYGITHUB))
    fields.pop("issues")
    repo, _ = CodeRepo.objects.get_or_create(
        full_name=fields.pop("full_name"),
        defaults={**fields, "production_signals": recorded(corpus_dir, SEARCH_ISSUES)["items"]},
    )
    PaperRepo.objects.create(paper=paper, repo=repo, source=PaperRepo.Source.SEED)
    return repo

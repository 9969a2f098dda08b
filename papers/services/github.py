"""Repository health from GitHub: metadata, CI workflows, production signals in issues, and links
from papers to repos (a README that mentions a paper's arXiv id links it).

Runs from the crawl_github command and fetch_repo_task. Conditional requests keep unchanged
repos cheap (ETag per API path on the repo row). A rate limit raises RateLimited after recording
it on the repo, so the task retries later; a 404 is recorded and nothing stored is cleared.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import DataError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ontology.selectors import gpu_vocabulary
from papers.clients.github import GithubClient, GithubError, GithubResponse, RateLimited
from papers.events import record_event
from papers.links import arxiv_ids
from papers.models import CodeRepo, Paper, PaperRepo

# The issue search's query (GitHub's search syntax, so a few words, not the whole vocabulary).
SIGNAL_QUERY = '"out of memory" OR OOM OR A100 OR H100'


@cache
def _signal() -> re.Pattern[str]:
    """Issue titles/bodies that show people run the code for real: memory blow-ups, CUDA errors,
    production, or a GPU model of the one vocabulary (ontology.selectors.gpu_vocabulary)."""
    gpu = gpu_vocabulary().word_pattern()
    return re.compile(rf"out of memory|\bOOM\b|CUDA error|{gpu}|in production", re.IGNORECASE)


def _signal_word(text: str) -> str:
    return gpu_vocabulary().canonical(text) or ("OOM" if text.upper() == "OOM" else text.lower())


@dataclass
class RepoReport:
    full_name: str
    changed: list[str] = field(default_factory=list)
    linked_papers: list[str] = field(default_factory=list)
    error: str = ""


def client() -> GithubClient:
    return GithubClient(settings.GITHUB_API_URL, settings.GITHUB_TOKEN)


def _dt(value: str | None) -> datetime | None:
    return parse_datetime(value) if value else None


def _apply_metadata(repo: CodeRepo, data: dict) -> None:
    repo.full_name = data.get("full_name") or repo.full_name
    repo.html_url = data.get("html_url") or repo.html_url
    repo.description = data.get("description") or ""
    repo.stars = data.get("stargazers_count")
    repo.forks = data.get("forks_count")
    repo.open_issues = data.get("open_issues_count")
    repo.pushed_at = _dt(data.get("pushed_at"))
    repo.license_spdx = ((data.get("license") or {}).get("spdx_id") or "").replace("NOASSERTION", "")
    repo.default_branch = data.get("default_branch") or ""
    repo.archived = bool(data.get("archived"))


def signals_from_issues(items: list[dict]) -> list[dict]:
    """Issues whose title or body matches a production signal, with what matched."""
    signals = []
    for item in items:
        text = f"{item.get('title', '')}\n{item.get('body') or ''}"
        matched = sorted({_signal_word(m.group(0)) for m in _signal().finditer(text)})
        if matched:
            signals.append({"title": item.get("title", ""), "url": item.get("html_url", ""),
                            "state": item.get("state", ""), "created_at": item.get("created_at", ""),
                            "matched": matched})
    return signals


def _fetch(gh: GithubClient, repo: CodeRepo, key: str, path: str, report: RepoReport, **kwargs) -> GithubResponse:
    """GET with the stored ETag; returns the response (None data when not modified)."""
    response = gh.get(path, etag=repo.etags.get(key, ""), **kwargs)
    if not response.not_modified:
        if response.etag:
            repo.etags[key] = response.etag
        report.changed.append(key)
    return response


def link_readme(repo: CodeRepo, readme: str) -> list[str]:
    """Link the repo to every stored paper whose arXiv id its README mentions."""
    linked = []
    for paper in Paper.objects.filter(arxiv_id__in=arxiv_ids(readme)):
        PaperRepo.objects.get_or_create(paper=paper, repo=repo, defaults={"source": PaperRepo.Source.README})
        linked.append(paper.arxiv_id)
    return linked


def sync_repo(full_name: str) -> RepoReport:
    """Refresh one repository. Raises RateLimited (recorded) so the caller can retry later."""
    repo = CodeRepo.objects.filter(full_name__iexact=full_name).first() or CodeRepo(full_name=full_name)
    report = RepoReport(repo.full_name)
    gh = client()
    try:
        with transaction.atomic():  # an answer of an unexpected shape stores nothing of this refresh
            _refresh(gh, repo, report)
    except RateLimited as exc:
        reason = f"GitHub rate limit reached; will retry in {exc.wait_s} s"
        _record_failure(repo, reason)
        raise
    except GithubError as exc:
        report.error = exc.reason
        _record_failure(repo, exc.reason)
        return report
    except (ValueError, TypeError, AttributeError, DataError, IntegrityError) as exc:
        report.error = f"GitHub answered with data of an unexpected shape ({type(exc).__name__}: {str(exc)[:200]})"
        repo = CodeRepo.objects.filter(full_name__iexact=full_name).first() or CodeRepo(full_name=full_name)
        _record_failure(repo, report.error)
        return report
    repo.failure_reason = ""
    repo.fetched_at = timezone.now()
    repo.save()
    record_event(stage="github", repo=repo,
                 message=f"refreshed ({', '.join(report.changed) or 'not modified'})")
    return report


def _refresh(gh: GithubClient, repo: CodeRepo, report: RepoReport) -> None:
    """Read and store one repository's metadata, CI, issue signals and README links."""
    meta = _fetch(gh, repo, "repo", f"/repos/{repo.full_name}", report)
    if meta.data is not None:
        _apply_metadata(repo, meta.data)
    workflows = _fetch(gh, repo, "workflows", f"/repos/{repo.full_name}/actions/workflows", report)
    if workflows.data is not None:
        repo.workflows = [{"name": w.get("name", ""), "path": w.get("path", ""), "state": w.get("state", "")}
                          for w in workflows.data.get("workflows", [])]
        repo.has_ci = bool(repo.workflows)
    issues = gh.get("/search/issues", params={"q": f"repo:{repo.full_name} {SIGNAL_QUERY}", "per_page": 50})
    repo.production_signals = signals_from_issues(issues.data.get("items", []))
    repo.save()
    try:
        readme = _fetch(gh, repo, "readme", f"/repos/{repo.full_name}/readme", report, raw=True)
        report.linked_papers = link_readme(repo, readme.text) if not readme.not_modified else []
    except GithubError as exc:
        if exc.status != 404:  # no README is normal; other errors are worth a look
            raise


def _record_failure(repo: CodeRepo, reason: str) -> None:
    """Keep whatever was stored before; only the reason and an error event are written."""
    if repo.pk is None:
        repo.save()
    CodeRepo.objects.filter(pk=repo.pk).update(failure_reason=reason)
    repo.failure_reason = reason
    record_event(stage="github", repo=repo, message=reason, error=True)


def repos_to_sync() -> list[str]:
    """Every known repository, least recently fetched first."""
    order = (F("fetched_at").asc(nulls_first=True), "full_name")  # never fetched comes first
    return list(CodeRepo.objects.order_by(*order).values_list("full_name", flat=True))

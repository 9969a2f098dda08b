"""Celery tasks of the papers app (autodiscovered as `papers.tasks`): thin wrappers that load by id
and call a service.

Pipeline: crawl_arxiv_task (nightly beat) → for each new or newer paper a chain
download_pdf_task → parse_pdf_task (stores pages, sections, tables; indexes) → extract_paper_task
(queue `extract`: the stored pages through the ontology's extraction) → score_paper_task.
GitHub: crawl_github_task → fetch_repo_task per repo, retried when GitHub rate-limits.
Transient errors retry with exponential backoff and jitter; when retries run out, or on a
permanent error, the reason is recorded on the paper (status "failed") and the chain stops there.

The scoring and digest tasks live beside their services and are imported here so the worker
registers them under their contract names "papers.tasks.score_paper_task" and
"papers.tasks.send_digests_task".
"""
from __future__ import annotations

import logging
import random

import arxiv
import requests
from celery import chain, shared_task
from django.conf import settings
from django.utils import timezone

from ontology.services import LlmUnavailable
from papers.clients.download import DownloadError
from papers.clients.github import RateLimited
from papers.digest.tasks import send_digests_task
from papers.models import Paper
from papers.scoring.tasks import score_all_task, score_paper_task
from papers.services import crawl_arxiv, download_paper_pdf, fail_paper, parse_paper_pdf, record_event
from papers.services.extraction import ExtractionFailed, extract_paper
from papers.services.github import repos_to_sync, sync_repo
from papers.services.reachability import (
    claim_waiting_pdfs,
    crawl_due,
    health,
    mark_reachable,
    mark_unreachable,
    polite_countdowns,
)

__all__ = [
    "crawl_arxiv_task", "crawl_github_task", "download_pdf_task", "extract_paper_task", "fetch_repo_task",
    "parse_pdf_task", "pipeline_for", "queue_waiting_pdfs", "resume_work_task", "score_all_task", "score_paper_task",
    "send_digests_task",
]
log = logging.getLogger(__name__)
TRANSIENT_ARXIV = (requests.ConnectionError, requests.Timeout, arxiv.HTTPError, arxiv.UnexpectedEmptyPageError)


def backoff_s(retries: int, base: float = 10.0, cap: float = 900.0) -> int:
    """Exponential backoff with jitter: ~10 s, 20 s, 40 s ... capped at 15 minutes."""
    return int(min(cap, base * 2 ** retries) * random.uniform(0.8, 1.2))


def pipeline_for(paper_id: int):
    """The per-paper chain after a crawl: download, then parse (which hands over to the ontology)."""
    return chain(download_pdf_task.si(paper_id), parse_pdf_task.si(paper_id))


@shared_task(bind=True, name="papers.tasks.crawl_arxiv_task", max_retries=4)
def crawl_arxiv_task(self, query: str | None = None, max_results: int | None = None) -> dict:
    """Crawl arXiv, then start the PDF pipeline for every paper that is new or has a newer version."""
    try:
        report = crawl_arxiv(query, max_results)
    except TRANSIENT_ARXIV as exc:
        if self.request.retries >= self.max_retries:
            message = f"arXiv unreachable or failing after {self.max_retries} retries: {exc}"
            record_event(stage="crawl", message=message, error=True)
            mark_unreachable(message, settings.RESUME_EVERY_S)  # the resume task tries again then
            return {"new": [], "updated": [], "errors": [message], "pages": 0}
        countdown = backoff_s(self.request.retries, base=60)
        mark_unreachable(f"{type(exc).__name__}: {exc}", countdown)
        raise self.retry(exc=exc, countdown=countdown) from exc
    mark_reachable()
    for arxiv_id in report.new + report.updated:
        paper_id = Paper.objects.filter(arxiv_id=arxiv_id).values_list("pk", flat=True).first()
        if paper_id is not None:
            Paper.objects.filter(pk=paper_id).update(pdf_queued_at=timezone.now())
            pipeline_for(paper_id).apply_async()
    queued = queue_waiting_pdfs()
    log.info("arXiv crawl: %s; %d waiting PDF(s) queued", report.summary(), queued)
    return {"new": report.new, "updated": report.updated, "errors": report.errors, "pages": report.pages,
            "queued_waiting": queued}


def queue_waiting_pdfs(limit: int = 500) -> int:
    """Queue the download -> parse -> extract chain of papers waiting for their PDF, politely spaced."""
    ids = claim_waiting_pdfs(limit)
    for paper_id, countdown in zip(ids, polite_countdowns(len(ids)), strict=True):
        pipeline_for(paper_id).apply_async(countdown=countdown)
    return len(ids)


@shared_task(name="papers.tasks.resume_work_task")
def resume_work_task() -> dict:
    """Start or resume the work that needs arXiv (beat, every RESUME_EVERY_S; and once at `make run`).

    Never crawled, or arXiv unreachable and the next try due: crawl now (it queues the waiting PDFs
    when it succeeds). arXiv reachable: queue any PDFs still waiting. Otherwise wait for next_try_at.
    """
    if crawl_due():
        crawl_arxiv_task.delay()
        return {"action": "crawl"}
    row = health()
    if row is not None and row.reachable:
        return {"action": "queue", "queued": queue_waiting_pdfs()}
    return {"action": "wait", "next_try_at": row.next_try_at.isoformat() if row and row.next_try_at else None}


@shared_task(bind=True, name="papers.tasks.download_pdf_task", max_retries=5)
def download_pdf_task(self, paper_id: int) -> int | None:
    """Download the paper's PDF; idempotent (a paper already parsed for this version is skipped)."""
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return None
    try:
        return paper_id if download_paper_pdf(paper) else None
    except DownloadError as exc:
        if not exc.permanent:
            mark_unreachable(exc.reason, backoff_s(self.request.retries))
        if self.request.retries >= self.max_retries:
            fail_paper(paper, "download", f"{exc.reason} (gave up after {self.max_retries} retries)")
            return None
        raise self.retry(exc=exc, countdown=backoff_s(self.request.retries)) from exc


@shared_task(name="papers.tasks.parse_pdf_task")
def parse_pdf_task(paper_id: int) -> dict:
    """Parse a downloaded PDF; on success queue the extraction of its stored pages."""
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None or paper.status != Paper.Status.DOWNLOADED:
        return {"paper_id": paper_id, "skipped": paper.status if paper else "missing"}
    try:
        parsed = parse_paper_pdf(paper)
    except Exception as exc:  # a parser bug must still leave a reason on the paper, then surface
        fail_paper(paper, "parse", f"unexpected parser error ({exc!r}); report it with this PDF")
        raise
    if parsed is None:
        return {"paper_id": paper_id, "failed": paper.failure_reason}
    extract_paper_task.delay(paper_id)
    return {"paper_id": paper_id, "sections": len(parsed.sections), "tables": len(parsed.tables)}


@shared_task(
    bind=True,
    name="papers.tasks.extract_paper_task",
    autoretry_for=(LlmUnavailable,),
    retry_backoff=30,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=48,
    acks_late=True,
)
def extract_paper_task(self, paper_id: int) -> dict:
    """Extract facts of one parsed paper; LLM unreachable -> retried with backoff (paper shows `waiting`). A paper
    removed while its extraction waited (a row merged away by papers.services.identity) is skipped, as the download
    and parse tasks skip one."""
    if not Paper.objects.filter(pk=paper_id).exists():
        log.warning("extract_paper_task: paper %s no longer exists", paper_id)
        return {"paper_id": paper_id, "skipped": "missing"}
    try:
        run = extract_paper(paper_id)
    except ExtractionFailed as exc:
        return {"paper_id": paper_id, "status": "failed", "error": str(exc)}
    score_paper_task.delay(paper_id)
    return {"paper_id": paper_id, "status": run.status, "facts_created": run.facts_created,
            "facts_updated": run.facts_updated, "facts_kept": run.facts_kept}


@shared_task(bind=True, name="papers.tasks.fetch_repo_task", max_retries=6)
def fetch_repo_task(self, full_name: str) -> dict:
    """Refresh one GitHub repository; when rate-limited, retry after the reset GitHub announced."""
    try:
        report = sync_repo(full_name)
    except RateLimited as exc:
        if self.request.retries >= self.max_retries:
            return {"repo": full_name, "error": f"{exc} (gave up after {self.max_retries} retries)"}
        raise self.retry(exc=exc, countdown=exc.wait_s) from exc
    except (requests.ConnectionError, requests.Timeout, requests.HTTPError) as exc:
        if self.request.retries >= self.max_retries:
            return {"repo": full_name, "error": f"GitHub unreachable: {exc}"}
        raise self.retry(exc=exc, countdown=backoff_s(self.request.retries)) from exc
    return {"repo": report.full_name, "changed": report.changed, "linked": report.linked_papers,
            "error": report.error}


@shared_task(name="papers.tasks.crawl_github_task")
def crawl_github_task() -> int:
    """Queue a refresh of every known repository."""
    names = repos_to_sync()
    for full_name in names:
        fetch_repo_task.delay(full_name)
    return len(names)

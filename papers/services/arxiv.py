"""Writing arXiv metadata: create papers, replace one only by a newer version, link code repos.

Runs from the nightly crawl task and `crawl_arxiv` (live API or saved answers). Each run returns
a CrawlReport that says what changed, so the command can print it and the task can log it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import arxiv
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ontology.services import index_paper
from papers import arxiv_ids
from papers.clients.arxiv import ArxivError, make_client, read_atom_file, search_pages
from papers.events import record_event
from papers.links import github_repos
from papers.models import Author, CodeRepo, Paper, PaperAuthor, PaperRepo


@dataclass
class CrawlReport:
    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    pages: int = 0
    errors: list[str] = field(default_factory=list)
    stopped_early: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.new or self.updated)

    def summary(self) -> str:
        text = (f"{len(self.new)} new, {len(self.updated)} updated to a newer version, "
                f"{len(self.unchanged)} unchanged ({self.pages} page(s) read)")
        if self.stopped_early:
            text += "; stopped early: nothing new on the last pages"
        return text


def set_authors(paper: Paper, names: list[str]) -> None:
    """Replace the paper's author list with `names`, in order."""
    PaperAuthor.objects.filter(paper=paper).delete()
    for position, name in enumerate(names):
        author, _ = Author.objects.get_or_create(name=name[:300])
        PaperAuthor.objects.get_or_create(paper=paper, author=author, defaults={"position": position})


def link_code(paper: Paper, full_names: list[str], source: str) -> list[CodeRepo]:
    """Link `paper` to each GitHub repo (created when new); an existing link keeps its source."""
    repos = []
    for full_name in full_names:
        repo = CodeRepo.objects.filter(full_name__iexact=full_name).first()
        if repo is None:
            repo = CodeRepo.objects.create(full_name=full_name, html_url=f"https://github.com/{full_name}")
        PaperRepo.objects.get_or_create(paper=paper, repo=repo, defaults={"source": source})
        repos.append(repo)
    return repos


def link_code_urls(paper: Paper, urls: list[str], source: str) -> list[CodeRepo]:
    """Link `paper` to every GitHub repo the URLs name (link_code by URL: a knowledge file's code links)."""
    return link_code(paper, [name for url in urls for name in github_repos(url)], source)


class EntryError(ValueError):
    """An arXiv entry that cannot be stored as it is (a malformed id, a field too long); nothing of it is."""


def _clean(text: str | None) -> str:
    return (text or "").replace("\x00", "")  # PostgreSQL text cannot hold NUL


def _checked_fields(arxiv_id: str, fields: dict) -> dict:
    """`fields`, or EntryError naming the first one longer than its column allows."""
    for name, value in fields.items():
        column = Paper._meta.get_field(name)
        limit = getattr(getattr(column, "base_field", column), "max_length", None)
        values = value if isinstance(value, list) else [value]
        if limit and any(isinstance(v, str) and len(v) > limit for v in values):
            raise EntryError(f"{arxiv_id}: {name} is longer than {limit} characters; entry skipped")
    return fields


def entry_fields(result: arxiv.Result) -> tuple[str, dict]:
    """The paper's id and the columns to store for one arXiv entry; EntryError when it is malformed."""
    short_id = result.get_short_id()
    try:
        arxiv_id, version = arxiv_ids.parse(short_id)
    except arxiv_ids.ArxivIdError as exc:
        raise EntryError(f"entry {result.entry_id[:80]!r}: {exc}; entry skipped") from None
    text = f"{_clean(result.summary)}\n{_clean(result.comment)}"
    return arxiv_id, _checked_fields(arxiv_id, {
        "version": version,
        "title": " ".join(_clean(result.title).split()),
        "abstract": " ".join(_clean(result.summary).split()),
        "published": result.published,
        "updated": result.updated,
        "primary_category": _clean(result.primary_category),
        "categories": [_clean(c) for c in result.categories],
        "comment": _clean(result.comment),
        "journal_ref": _clean(result.journal_ref),
        "doi": _clean(result.doi),
        "pdf_url": _clean(result.pdf_url),
        "code_urls": [f"https://github.com/{name}" for name in github_repos(text)],
    })


def upsert_result(result: arxiv.Result) -> str:
    """Store and index one arXiv entry, all of it or (EntryError) nothing. Returns "new", "updated"
    (a newer version replaced the row) or "unchanged"."""
    arxiv_id, fields = entry_fields(result)
    version = fields["version"]
    text = f"{_clean(result.summary)}\n{_clean(result.comment)}"
    with transaction.atomic():
        paper = Paper.objects.select_for_update().filter(arxiv_id=arxiv_id).first()
        if paper is not None and paper.version >= version:
            return "unchanged"
        outcome = "new" if paper is None else "updated"
        if paper is None:
            try:
                with transaction.atomic():  # a savepoint: another worker may insert the same id first
                    paper = Paper.objects.create(arxiv_id=arxiv_id, first_crawled_at=timezone.now(), **fields)
            except IntegrityError:
                return "unchanged"
        else:
            old_version = paper.version
            if old_version >= 1:  # a new version has a new PDF: the pipeline starts again for it
                fields.update(status=Paper.Status.NEW, failure_stage="", failure_reason="")
            Paper.objects.filter(pk=paper.pk).update(**fields)
            paper.refresh_from_db()
            was = f"v{old_version}" if old_version else "seed entry"
            record_event(stage="crawl", paper=paper, message=f"{was} replaced by arXiv metadata of v{version}")
        set_authors(paper, [_clean(author.name) for author in result.authors])
        link_code(paper, github_repos(text), PaperRepo.Source.ABSTRACT)
        index_paper(paper)  # its title and abstract answer searches before any PDF is read
    return outcome


def _report_error(report: CrawlReport, message: str) -> None:
    report.errors.append(message)
    record_event(stage="crawl", message=message, error=True)


def _store(results: list[arxiv.Result], report: CrawlReport) -> int:
    """Upsert a page of results into the report, each entry whole or not at all; returns how many
    were new or updated. A malformed entry is an error in the report; the others are stored."""
    changed = 0
    for result in results:
        try:
            outcome = upsert_result(result)
        except EntryError as exc:
            _report_error(report, str(exc))
            continue
        getattr(report, outcome).append(arxiv_ids.normalise(result.get_short_id()))
        changed += outcome != "unchanged"
    return changed


def crawl_arxiv(query: str | None = None, max_results: int | None = None, *, ids: list[str] | None = None,
                page_size: int | None = None, stop_after_empty_pages: int | None = None) -> CrawlReport:
    """Search arXiv newest first (or fetch `ids`), politely (settings.ARXIV_DELAY_S between requests);
    stop after `stop_after_empty_pages` consecutive pages that brought nothing new. Permanent API
    errors are recorded in the report; transient ones (network, 5xx, empty pages) propagate for a retry."""
    report = CrawlReport()
    client = make_client(settings.ARXIV_API_URL, settings.ARXIV_DELAY_S, page_size or settings.ARXIV_PAGE_SIZE)
    empty_in_a_row = 0
    limit = stop_after_empty_pages or settings.ARXIV_STOP_AFTER_EMPTY_PAGES
    try:
        query = query if query is not None else ("" if ids else settings.ARXIV_QUERY)
        for page in search_pages(client, query, max_results or settings.ARXIV_MAX_RESULTS, ids):
            report.pages += 1
            empty_in_a_row = 0 if _store(page.results, report) else empty_in_a_row + 1
            if empty_in_a_row >= limit:
                report.stopped_early = True
                break
    except ArxivError as exc:
        _report_error(report, str(exc))
    except (ValueError, TypeError) as exc:  # the package read a live page it could not parse (a bad date)
        _report_error(report, f"arXiv answered page {report.pages + 1} with an entry that cannot be read "
                              f"({exc}); that page was skipped")
    return report


def import_atom_files(paths: list[Path]) -> CrawlReport:
    """Ingest saved API answers; a bad file is reported and the others are still imported."""
    report = CrawlReport()
    for path in paths:
        try:
            answer = read_atom_file(path)
        except (ArxivError, OSError) as exc:
            _report_error(report, str(exc) if isinstance(exc, ArxivError) else f"cannot read {path}: {exc}")
            continue
        report.pages += 1
        for problem in answer.unreadable:
            _report_error(report, problem)
        _store(answer.results, report)
    return report

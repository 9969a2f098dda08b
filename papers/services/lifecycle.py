"""The paper's life: the create-or-fill upsert and every status change, in one place.

Every writer of a `papers_paper` row outside a crawl's metadata replacement (papers.services.arxiv,
where a newer arXiv version wins) comes here: the seed list, a PDF stored under a new identity
(papers.services.pdfs), a knowledge file (knowledge.load), and each pipeline step's outcome
(download, parse, extract). Which paper a PDF is decides papers.services.identity.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from papers.events import record_event
from papers.models import Paper, Section, Table
from papers.services.arxiv import set_authors

_NOT_READ = (Paper.Status.NEW, Paper.Status.FAILED)


def fill_paper(arxiv_id: str, *, version: int, values: dict[str, Any],
               authors: list[str] | None = None) -> tuple[Paper, bool, list[str]]:
    """(paper, created, fields filled): create the paper, or fill in the fields still empty here;
    what is filled already is left alone (a crawl or a person may have written it). A version-0
    paper (a seed entry, version unknown) takes a known version. The row is held FOR NO KEY UPDATE
    until the caller's transaction ends (the lock ontology.services.store_facts takes: rows pointing
    at the paper may still be written meanwhile)."""
    paper = Paper.objects.select_for_update(no_key=True).filter(arxiv_id=arxiv_id).first()
    if paper is None:
        paper = Paper.objects.create(arxiv_id=arxiv_id, version=version, **values)
        if authors:
            set_authors(paper, authors)
        return paper, True, sorted(values)
    updates = {name: value for name, value in values.items() if value and not getattr(paper, name)}
    if paper.version == 0 and version > 0:
        updates["version"] = version
    if updates:
        Paper.objects.filter(pk=paper.pk).update(**updates)
        paper.refresh_from_db()
    filled = sorted(updates)
    if authors and not paper.authors.exists():
        set_authors(paper, authors)
        filled.append("authors")
    return paper, False, filled


class OutlineSection(Protocol):
    number: str
    title: str
    page_start: int
    page_end: int


class OutlineTable(Protocol):
    page: int
    caption: str
    n_rows: int
    n_cols: int


def store_outline(paper: Paper, sections: Sequence[OutlineSection], tables: Sequence[OutlineTable],
                  read_elsewhere: bool) -> bool:
    """An outline read from a knowledge file, for a paper this instance has not parsed itself: its
    sections and table captions where it has none, and, when another instance read its PDF
    (`read_elsewhere`), the status of a read paper. True when anything changed."""
    changed = False
    if sections and not paper.sections.exists():
        Section.objects.bulk_create([
            Section(paper=paper, order=i, number=s.number, title=s.title, page_start=s.page_start, page_end=s.page_end)
            for i, s in enumerate(sections)
        ])
        changed = True
    if tables and not paper.tables.exists():
        Table.objects.bulk_create([
            Table(paper=paper, order=i, page=t.page, caption=t.caption, n_rows=t.n_rows, n_cols=t.n_cols, cells=[])
            for i, t in enumerate(tables)
        ])
        changed = True
    if read_elsewhere and paper.status in _NOT_READ:
        mark_paper(paper, Paper.Status.EXTRACTED)
        changed = True
    return changed


def mark_paper(paper: Paper, status: str, stage: str = "", reason: str = "") -> None:
    """Set the status (and a failure's stage and reason, or none) without recording an event."""
    Paper.objects.filter(pk=paper.pk).update(status=status, failure_stage=stage if reason else "",
                                             failure_reason=reason)
    paper.status, paper.failure_stage, paper.failure_reason = status, stage if reason else "", reason


def fail_paper(paper: Paper, stage: str, reason: str) -> None:
    """Mark a permanent failure: status, stage and reason on the paper, plus an error event.

    Stored data (metadata, an earlier PDF and its sections) is left as it is.
    """
    mark_paper(paper, Paper.Status.FAILED, stage, reason)
    record_event(stage=stage, message=reason, paper=paper, error=True)


def advance_paper(paper: Paper, status: str, stage: str, message: str, **fields: Any) -> None:
    """Move a paper to `status` after a successful step, clearing any earlier failure."""
    updates = {"status": status, "failure_stage": "", "failure_reason": "", **fields}
    Paper.objects.filter(pk=paper.pk).update(**updates)
    # Read back what was stored: the clean fields rewrite text PostgreSQL refuses (papers.cleaning), and
    # whatever uses `paper` next (the search index) must see the stored text, not the raw input.
    paper.refresh_from_db(fields=list(updates))
    record_event(stage=stage, message=message, paper=paper)

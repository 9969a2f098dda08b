"""Reading this instance's knowledge into records: `export_knowledge FILE`.

Runs on demand (a team moving its reviewed wiki to a new server, or sharing it). Every paper is
exported with its outline, table captions, latest scorecard and all facts — rejected ones too, so
the receiving instance never re-creates what a person threw out — each with its revision history.
"""
from __future__ import annotations

import socket
from pathlib import Path

from django.utils import timezone

from knowledge.records import (
    FactRecord,
    Header,
    PaperRecord,
    RevisionRecord,
    ScoreRecord,
    SectionRecord,
    TableRecord,
    write_file,
)
from ontology.selectors import facts_for_export
from papers.selectors import export_papers, read_from_pdf

SCORE_FIELDS = tuple(name for name in ScoreRecord.model_fields)
PAPER_FIELDS = ("arxiv_id", "version", "title", "abstract", "published", "updated", "primary_category", "categories",
                "doi", "pdf_url", "code_urls", "page_count", "environment")


def _fact_record(fact) -> FactRecord:
    revisions = [
        RevisionRecord(action=r.action, actor=r.actor, user=r.user.get_username() if r.user else None,
                       before=r.before, after=r.after, note=r.note, created_at=r.created_at)
        for r in fact.revisions.all()
    ]
    return FactRecord(kind=fact.kind, subject=fact.subject, parameter=fact.parameter, value=fact.value or None,
                      unit=fact.unit or None, condition=fact.condition or None, effect=fact.effect or None,
                      page=fact.page, quote=fact.quote, confidence=fact.confidence, extractor=fact.extractor,
                      status=fact.status, fingerprint=fact.fingerprint, revisions=revisions,
                      techniques=fact.person_techniques)


def paper_record(paper, facts: list) -> PaperRecord:
    """One paper as a knowledge record (`paper` as papers.selectors.export_papers reads it, `facts` as
    ontology.selectors.facts_for_export does)."""
    latest = next(iter(paper.latest_scores), None)
    return PaperRecord(
        **{name: getattr(paper, name) for name in PAPER_FIELDS},
        authors=[link.author.name for link in paper.paperauthor_set.all()],
        read_from_pdf=read_from_pdf(paper),
        sections=[SectionRecord(number=s.number, title=s.title, page_start=s.page_start, page_end=s.page_end)
                  for s in paper.sections.all()],
        tables=[TableRecord(page=t.page, caption=t.caption, n_rows=t.n_rows, n_cols=t.n_cols) for t in paper.tables.all()],
        score=ScoreRecord(**{name: getattr(latest, name) for name in SCORE_FIELDS}) if latest else None,
        facts=[_fact_record(f) for f in facts],
    )


def paper_records(papers=None) -> list[PaperRecord]:
    """Records of `papers` (a Paper queryset; every paper when None), in arXiv-id order, in a fixed
    number of queries."""
    rows = list(export_papers(papers))
    facts = facts_for_export([paper.pk for paper in rows])
    return [paper_record(paper, facts.get(paper.pk, [])) for paper in rows]


def export_knowledge(path: Path, papers=None) -> int:
    """Write every paper (or `papers`) to `path`; returns how many were written."""
    header = Header(origin=f"export of {socket.gethostname()}"[:200], as_of=timezone.now())
    return write_file(path, header, paper_records(papers))

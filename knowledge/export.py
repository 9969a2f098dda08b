"""Reading this instance's knowledge into records: `export_knowledge FILE`.

Runs on demand (a team moving its reviewed wiki to a new server, or sharing it). Every paper is
exported with its outline, table captions, latest scorecard and all facts — rejected ones too, so
the receiving instance never re-creates what a person threw out — each with its revision history.
"""
from __future__ import annotations

import socket
from pathlib import Path

from django.db.models import Prefetch
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
from ontology.models import Fact, FactRevision, FactTechnique
from papers.models import Paper, PaperAuthor, Score

SCORE_FIELDS = tuple(name for name in ScoreRecord.model_fields)
PAPER_FIELDS = ("arxiv_id", "version", "title", "abstract", "published", "updated", "primary_category", "categories",
                "doi", "pdf_url", "code_urls", "page_count", "environment")


def _fact_record(fact: Fact) -> FactRecord:
    revisions = [
        RevisionRecord(action=r.action, actor=r.actor, user=r.user.get_username() if r.user else None,
                       before=r.before, after=r.after, note=r.note, created_at=r.created_at)
        for r in fact.revisions.all()
    ]
    return FactRecord(kind=fact.kind, subject=fact.subject, parameter=fact.parameter, value=fact.value or None,
                      unit=fact.unit or None, condition=fact.condition or None, effect=fact.effect or None,
                      page=fact.page, quote=fact.quote, confidence=fact.confidence, extractor=fact.extractor,
                      status=fact.status, fingerprint=fact.fingerprint, revisions=revisions,
                      techniques=sorted(link.technique.name for link in fact.technique_links.all()
                                        if link.linked_by == FactTechnique.LinkedBy.PERSON))


def paper_record(paper) -> PaperRecord:
    """One paper as a knowledge record (expects the prefetches of `paper_records`)."""
    latest = next(iter(paper.latest_scores), None)
    return PaperRecord(
        **{name: getattr(paper, name) for name in PAPER_FIELDS},
        authors=[link.author.name for link in paper.paperauthor_set.all()],
        read_from_pdf=bool(paper.pdf_path) or paper.status == Paper.Status.EXTRACTED,
        sections=[SectionRecord(number=s.number, title=s.title, page_start=s.page_start, page_end=s.page_end)
                  for s in paper.sections.all()],
        tables=[TableRecord(page=t.page, caption=t.caption, n_rows=t.n_rows, n_cols=t.n_cols) for t in paper.tables.all()],
        score=ScoreRecord(**{name: getattr(latest, name) for name in SCORE_FIELDS}) if latest else None,
        facts=[_fact_record(f) for f in paper.facts.all()],
    )


def paper_records(papers) -> list[PaperRecord]:
    """Records of `papers` (a Paper queryset), in arXiv-id order, in a fixed number of queries."""
    papers = papers.order_by("arxiv_id").prefetch_related(
        Prefetch("paperauthor_set", queryset=PaperAuthor.objects.select_related("author").order_by("position")),
        "sections", "tables",
        Prefetch("scores", queryset=Score.objects.filter(is_latest=True), to_attr="latest_scores"),
        Prefetch("facts", queryset=Fact.objects.exclude(status=Fact.Status.SUPERSEDED).order_by("page", "id").prefetch_related(
            Prefetch("revisions", queryset=FactRevision.objects.select_related("user").order_by("created_at", "id")),
            Prefetch("technique_links", queryset=FactTechnique.objects.select_related("technique")))),
    )
    return [paper_record(paper) for paper in papers]


def export_knowledge(path: Path, papers=None) -> int:
    """Write every paper (or `papers`) to `path`; returns how many were written."""
    header = Header(origin=f"export of {socket.gethostname()}"[:200], as_of=timezone.now())
    return write_file(path, header, paper_records(papers if papers is not None else Paper.objects.all()))

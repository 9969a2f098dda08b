"""Reads of the papers app (services write, selectors read): for the UI, the API, the digest, the advisor.

First the reads other apps and the pipeline use (`paper_list`, `paper_detail`, the status counts),
then the page and API reads.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, F, FilteredRelation, Prefetch, Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone

from ontology.selectors import QuotedPage
from papers.arxiv_ids import NEW_STYLE
from papers.arxiv_ids import URL_PATTERN as ARXIV_ID_URL_PATTERN
from papers.links import github_repos
from papers.models import (
    CodeRepo,
    IdentityConflict,
    Paper,
    PaperAuthor,
    PaperPage,
    PipelineEvent,
    Section,
    Table,
)
from papers.models.digest import Subscription
from papers.models.paper import READ_STATUSES
from papers.models.scoring import Score
from papers.pdf.table_rows import table_rows
from papers.scoring.inputs import RepoInput, ScoringInput
from papers.scoring.rules import HIGH_COST, HIGH_VALUE, SUBSCORE_MAXIMA, score
from papers.scoring.selectors import fact_input, text_parts_of
from papers.scoring.services import card_fields, scoring_config
from papers.services.identity import TITLE_MATCHES, local_id, title_overlap
from papers.services.reachability import ARXIV, health, waiting_for_pdf
from papers.services.seed import SEED_FILE

__all__ = [  # the papers app's knowledge other apps read, besides the functions defined here
    "ARXIV_ID_URL_PATTERN", "HIGH_COST", "HIGH_VALUE", "RepoInput", "ScoringInput", "card_fields", "fact_input", "github_repos", "score",
    "scoring_config", "text_parts_of", "TITLE_MATCHES", "local_id", "title_overlap",
]

# The reads other apps and the pipeline use, and the pipeline's status counts.


def paper_list(*, status: str | None = None, search: str | None = None, limit: int | None = None) -> QuerySet[Paper]:
    """Papers newest first, optionally by pipeline status or a title/abstract/id search."""
    papers = Paper.objects.all()
    if status:
        papers = papers.filter(status=status)
    if search:
        papers = papers.filter(Q(title__icontains=search) | Q(abstract__icontains=search) | Q(arxiv_id=search))
    papers = papers.order_by(F("published").desc(nulls_last=True), "arxiv_id")
    return papers[:limit] if limit else papers


def papers_by_id(arxiv_ids: list[str] | None = None) -> QuerySet[Paper]:
    """The papers with these arXiv ids (every paper when None), in id order (reindexing, exports)."""
    papers = Paper.objects.order_by("arxiv_id")
    return papers.filter(arxiv_id__in=arxiv_ids) if arxiv_ids is not None else papers


def paper_detail(arxiv_id: str) -> Paper | None:
    """One paper by arXiv id with authors, sections, tables, repos and pipeline events prefetched."""
    return (
        Paper.objects.filter(arxiv_id=arxiv_id)
        .prefetch_related(
            Prefetch("paperauthor_set", queryset=PaperAuthor.objects.select_related("author")),
            Prefetch("sections", queryset=Section.objects.order_by("order")),
            "tables", "repos", "events",
        )
        .first()
    )


def quoted_pages(keys: Iterable[tuple[int, int]]) -> dict[tuple[int, int], QuotedPage]:
    """The stored text and table rows (papers.pdf.table_rows) of each (paper id, page number): what
    ontology.quotes shows instead of a quote of table text (registered in papers/apps.py). Two queries."""
    wanted = set(keys)
    out = {key: QuotedPage() for key in wanted}
    if not wanted:
        return out
    papers = {paper_id for paper_id, _ in wanted}
    numbers = {number for _, number in wanted}
    for paper_id, number, text in (PaperPage.objects.filter(paper_id__in=papers, number__in=numbers)
                                   .values_list("paper_id", "number", "text")):
        if (paper_id, number) in out:
            out[paper_id, number].text = text
    for table in Table.objects.filter(paper_id__in=papers, page__in=numbers).order_by("paper_id", "order"):
        if (table.paper_id, table.page) in out:
            out[table.paper_id, table.page].rows += table_rows(table.cells, table.page, table.caption)
    return out


def pipeline_counts() -> dict[str, int]:
    """How many papers are in each pipeline status (every status present, zero when none)."""
    counts = dict(Paper.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    return {status: counts.get(status, 0) for status, _ in Paper.Status.choices}


def open_identity_conflicts(limit: int = 20) -> QuerySet[IdentityConflict]:
    """PDFs that named another stored paper's arXiv id and wait for a person (the review page)."""
    return IdentityConflict.objects.filter(resolved=False).select_related("paper", "claimed")[:limit]


def failed_papers(limit: int = 50) -> QuerySet[Paper]:
    """Papers whose pipeline stopped, with the stage and the reason, most recently changed first."""
    return Paper.objects.filter(status=Paper.Status.FAILED).order_by("-updated_at")[:limit]


# ---------------------------------------------------------------------------------------------
# Reads for the browser pages and the REST API. One query per list, so list
# pages and endpoints keep a fixed query count however many rows they show.
# ---------------------------------------------------------------------------------------------

PAPER_STATUSES = Paper.Status.choices
LIST_FIELDS = ("arxiv_id", "version", "title", "published", "primary_category", "status", "failure_reason")
PAPER_ORDERS = {"published": "published", "score": "score_total", "title": "title", "arxiv_id": "arxiv_id"}
_STAGE_LABELS = {"downloaded": "PDF downloaded", "parsed": "Parsed", "extracted": "Facts extracted", "scored": "Scored"}


def subscore_maxima() -> dict[str, int]:
    """Each scorecard sub-score's maximum points, in display order (the scoring rules' own figures)."""
    return dict(SUBSCORE_MAXIMA)


def with_latest_score(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Annotate each paper with its latest score's `score_total` and `score_tier` (None if unscored).

    One LEFT JOIN on the latest score (at most one per paper, a database constraint), not a subquery per row.
    """
    return papers.annotate(
        latest=FilteredRelation("scores", condition=Q(scores__is_latest=True)),
        score_total=F("latest__total"),
        score_tier=F("latest__tier"),
    )


def paper_rows(*, search: str | None = None, status: str | None = None, category: str | None = None,
               min_score: float | None = None, order: str = "-published") -> QuerySet[Paper]:
    """Papers for a list page or endpoint, filtered, with their latest score.

    `order` is a key of PAPER_ORDERS, "-" first for descending; papers without a value sort last.
    """
    papers = with_latest_score(paper_list(search=search, status=status).only(*LIST_FIELDS))
    if category:
        papers = papers.filter(categories__contains=[category])
    if min_score is not None:
        papers = papers.filter(score_total__gte=min_score)
    expr = F(PAPER_ORDERS[order.lstrip("-")])
    ordering = expr.desc(nulls_last=True) if order.startswith("-") else expr.asc(nulls_last=True)
    return papers.order_by(ordering, "arxiv_id")


def paper_page(arxiv_id: str) -> Paper | None:
    """paper_detail plus what its page shows: `author_names`, `section_list`, `repo_list`, `latest_score`."""
    paper = paper_detail(arxiv_id)
    if paper is None:
        return None
    paper.author_names = [link.author.name for link in paper.paperauthor_set.all()]
    paper.section_list = list(paper.sections.all())
    paper.repo_list = list(paper.repos.all())
    paper.latest_score = Score.objects.filter(paper=paper, is_latest=True).first()
    return paper


def papers_new_since(since: datetime, limit: int = 20) -> list[Paper]:
    """Papers arXiv published, or a crawl first found, since `since`; the most recent of the two first.

    Rows the seed list, the knowledge pack or an upload created are never new by their own date: they
    hold papers of any age, so only the arXiv date or a crawl's first sight (`first_crawled_at`) counts.
    """
    papers = with_latest_score(Paper.objects.filter(Q(published__gte=since) | Q(first_crawled_at__gte=since)))
    return list(papers.annotate(new_at=Greatest("published", "first_crawled_at"))
                .order_by("-new_at", "arxiv_id")[:limit])


_NEW_STYLE_ID = re.compile(rf"^{NEW_STYLE}$")
# A latest scorecard whose screening found a neighbour (training, pruning, serverless functions), not
# a serving paper (papers.scoring.rules.serving_focus): kept and scored, but not put before a reader.
# Containment, not a key lookup: a scorecard without the answer (scored before rules version 2) is no neighbour,
# where `exclude(screening__serving_focus__answer="no")` would drop it (its missing key compares as NULL).
NEIGHBOUR_ANSWER = {"serving_focus": {"answer": "no"}}
NEIGHBOUR_SCORE = Q(screening__contains=NEIGHBOUR_ANSWER)


def neighbour_papers() -> set[str]:
    """Ids of the papers screening found to be neighbours rather than serving papers (diagnose leaves them out)."""
    return set(Score.objects.filter(NEIGHBOUR_SCORE, is_latest=True).values_list("paper__arxiv_id", flat=True))


def top_scored_papers(limit: int = 10) -> list[Paper]:
    """The best latest scores of papers that were read (a PDF parsed), highest first; an unread
    paper's score judges its abstract alone, so it is not ranked against them. Neighbours are left out."""
    papers = with_latest_score(Paper.objects.filter(scores__is_latest=True, status__in=READ_STATUSES))
    papers = papers.exclude(latest__screening__contains=NEIGHBOUR_ANSWER)
    return list(papers.order_by("-score_total", "arxiv_id")[:limit])


def _submitted(paper: Paper) -> str:
    """A sortable submission month: the arXiv id's YYMM (new-style ids), else the arXiv date; "" unknown."""
    match = _NEW_STYLE_ID.match(paper.arxiv_id)
    if match:
        return f"20{paper.arxiv_id[:2]}-{paper.arxiv_id[2:4]}"
    return f"{paper.published:%Y-%m}" if paper.published else ""


def newest_read_papers(limit: int = 8) -> list[Paper]:
    """The most recently submitted papers this install has read (here or in the knowledge pack),
    neighbours left out; papers with no known date (a local id, no arXiv listing) come last."""
    papers = with_latest_score(Paper.objects.filter(status__in=READ_STATUSES)).exclude(
        latest__screening__contains=NEIGHBOUR_ANSWER).only("arxiv_id", "title", "published", "status", "pdf_url")
    return sorted(papers, key=lambda p: (_submitted(p), p.arxiv_id), reverse=True)[:limit]


RATE_WINDOW = timedelta(minutes=15)


def _stage_rates(since: datetime) -> dict[str, int]:
    """Successful steps per pipeline stage since `since` (from the recorded events)."""
    rows = (PipelineEvent.objects.filter(created_at__gte=since, level=PipelineEvent.Level.INFO, paper__isnull=False)
            .values_list("stage").annotate(n=Count("id")))
    return dict(rows)


def pipeline_status() -> dict[str, Any]:
    """How far the papers got, per stage: done, waiting, rate (per minute, last 15 minutes) and an ETA.

    "PDF downloaded" and "Parsed" count this instance's own PDFs; "Facts extracted" also counts papers
    whose facts came with a knowledge file (the starter pack), which is why it can exceed "Parsed".
    """
    now = timezone.now()
    by_status = pipeline_counts()
    total = sum(by_status.values())
    here = Paper.objects.exclude(pdf_path="")
    scored = Score.objects.filter(is_latest=True).count()
    waiting_pdfs = Paper.objects.filter(waiting_for_pdf()).count()
    counts = {
        "downloaded": (here.count(), waiting_pdfs, "download"),
        "parsed": (here.filter(status__in=READ_STATUSES).count(), by_status.get("downloaded", 0), "parse"),
        "extracted": (by_status.get("extracted", 0),
                      sum(by_status.get(s, 0) for s in READ_STATUSES if s != Paper.Status.EXTRACTED), "extract"),
        "scored": (scored, max(0, total - scored), "score"),
    }
    rates = _stage_rates(now - RATE_WINDOW)
    stages = []
    for key, (done, waiting, event_stage) in counts.items():
        per_min = rates.get(event_stage, 0) / (RATE_WINDOW.total_seconds() / 60)
        eta = now + timedelta(minutes=waiting / per_min) if per_min and waiting else None
        stages.append({"key": key, "label": _STAGE_LABELS[key], "done": done, "waiting": waiting,
                       "per_min": round(per_min, 1), "eta": eta})
    return {"total": total, "stages": stages, "failed": by_status.get("failed", 0), "by_status": by_status,
            "read": sum(by_status.get(s, 0) for s in READ_STATUSES), "waiting_for_pdf": waiting_pdfs}


def network_status(waiting_for_pdf_count: int) -> dict[str, Any]:
    """What the dashboard says about arXiv: never tried, reachable, or unreachable since when, beside
    the papers waiting for their PDF (counted once, by pipeline_status)."""
    row = health(ARXIV)
    return {"state": {True: "reachable", False: "unreachable", None: "not tried"}[row.reachable if row else None],
            "health": row, "waiting": waiting_for_pdf_count}


def latest_scores(*, tier: str | None = None, quadrant: str | None = None,
                  min_total: float | None = None) -> QuerySet[Score]:
    """Each paper's latest scorecard, best first."""
    scores = Score.objects.filter(is_latest=True).select_related("paper")
    if tier:
        scores = scores.filter(tier=tier)
    if quadrant:
        scores = scores.filter(quadrant=quadrant)
    if min_total is not None:
        scores = scores.filter(total__gte=min_total)
    return scores.order_by("-total", "paper__arxiv_id")


def repo_rows() -> QuerySet[CodeRepo]:
    """Code repositories by name."""
    return CodeRepo.objects.order_by("full_name")


def subscription_for_user(user: Any) -> Subscription | None:
    """The digest subscription of a signed-in user: the one with their email address, if any."""
    email = (getattr(user, "email", "") or "").strip().lower()
    return Subscription.objects.filter(email=email).first() if email else None


def repo_production_signals() -> list[tuple[str, list[dict[str, Any]]]]:
    """(repository, its production signals) for every crawled repository that has any (the advisor's
    diagnose reads the issue titles)."""
    return [(name, list(signals or [])) for name, signals in
            CodeRepo.objects.exclude(production_signals=[]).values_list("full_name", "production_signals")]


def seed_entries() -> dict[str, dict[str, Any]]:
    """The bundled seed list (papers/seed/papers.json) by arXiv id: curated titles and code links."""
    return {entry["arxiv_id"]: entry for entry in json.loads(SEED_FILE.read_text(encoding="utf-8"))["papers"]}


def export_papers(papers: QuerySet[Paper] | None = None) -> QuerySet[Paper]:
    """`papers` (every paper when None) in arXiv-id order, with what a knowledge export reads
    prefetched: authors in order, sections, tables, the latest score (`latest_scores`)."""
    papers = Paper.objects.all() if papers is None else papers
    return papers.order_by("arxiv_id").prefetch_related(
        Prefetch("paperauthor_set", queryset=PaperAuthor.objects.select_related("author").order_by("position")),
        "sections", "tables",
        Prefetch("scores", queryset=Score.objects.filter(is_latest=True), to_attr="latest_scores"),
    )


def read_from_pdf(paper: Paper) -> bool:
    """Whether the paper's PDF was read (here, or by the instance its knowledge came from)."""
    return bool(paper.pdf_path) or paper.status == Paper.Status.EXTRACTED

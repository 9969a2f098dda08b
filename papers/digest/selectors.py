"""What one subscriber's digest holds: the papers newly scored since their last digest, best first.

Read by papers.digest.services (to send) and `send_digest --dry-run` (to print). Facts come from
the ontology's `facts_for_paper` selector (the only cross-app read).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.urls import reverse

from papers import arxiv_ids
from papers.digest.similar import SimilarityIndex
from papers.models import CodeRepo, Paper, PaperRepo, Score, Subscription
from papers.scoring.selectors import fact_field, fact_input
from papers.selectors import NEIGHBOUR_SCORE

MAX_ITEMS = 20
FACTS_PER_PAPER = 3
SIMILAR_PER_PAPER = 3
FIRST_DIGEST_LOOKBACK = timedelta(days=7)


def paper_url(paper: Paper) -> str:
    """Where an email links a paper: its arXiv abstract, or, for a paper without an arXiv id (an
    uploaded PDF, keyed by its content hash), its page on this site as an absolute URL."""
    if arxiv_ids.is_arxiv_id(paper.arxiv_id):
        return f"https://arxiv.org/abs/{paper.arxiv_id}"
    return settings.SITE_URL + reverse("frontend:paper", args=[paper.arxiv_id])


@dataclass
class DigestItem:
    paper: Paper
    score: Score
    facts: list[dict] = field(default_factory=list)
    repos: list[CodeRepo] = field(default_factory=list)
    similar: list[tuple[Paper, float]] = field(default_factory=list)

    @property
    def abs_url(self) -> str:
        return paper_url(self.paper)

    @property
    def more_like_this(self) -> list[tuple[Paper, str]]:
        """The similar papers with their links, nearest first."""
        return [(paper, paper_url(paper)) for paper, _ in self.similar]


@dataclass
class Digest:
    subscription: Subscription
    since: datetime
    until: datetime
    items: list[DigestItem]
    total_new: int  # all new papers for this subscriber; `items` holds the best MAX_ITEMS of them

    @property
    def sections(self) -> list[tuple[str, list[DigestItem]]]:
        """(heading, items): the high-value, low-cost papers of the value matrix first, then the rest;
        an empty section is left out."""
        quick = [i for i in self.items if i.score.quadrant == Score.Quadrant.QUICK_WIN]
        rest = [i for i in self.items if i.score.quadrant != Score.Quadrant.QUICK_WIN]
        return [(title, items) for title, items in (("High value, low cost", quick), ("Other new papers", rest))
                if items]


def digest_since(subscription: Subscription, now: datetime) -> datetime:
    """Scores after this time are new to the subscriber: their last digest, or a week before joining."""
    if subscription.last_digest_at:
        return subscription.last_digest_at
    return (subscription.confirmed_at or now) - FIRST_DIGEST_LOOKBACK


def new_scores(subscription: Subscription, since: datetime, until: datetime) -> QuerySet[Score]:
    """Latest scores of papers first scored in (since, until]: a paper rescored later (its repo aged,
    a fact was added) is not news again, and a neighbour screening set aside is not news at all."""
    seen_before = Score.objects.filter(scored_at__lte=since).values("paper_id")
    scores = Score.objects.filter(
        is_latest=True, scored_at__gt=since, scored_at__lte=until, total__gte=subscription.min_score
    ).exclude(paper_id__in=seen_before).exclude(NEIGHBOUR_SCORE)
    if subscription.topics:
        scores = scores.filter(topics__overlap=subscription.topics)
    return scores.select_related("paper").order_by("-total", "paper__arxiv_id")


def top_facts(paper_id: int, limit: int = FACTS_PER_PAPER) -> list[dict]:
    """The paper's most confident facts that carry a quote, as plain dicts for the templates."""
    try:
        from ontology.selectors import facts_for_paper  # late: papers may read ontology selectors only
    except ImportError:
        return []
    facts: list[Any] = list(facts_for_paper(paper_id))
    facts.sort(key=lambda f: -float(fact_field(f, "confidence", 0) or 0))
    found = []
    for fact in facts:
        view = fact_input(fact)
        if view.quote:
            found.append({"kind": fact_field(fact, "kind", ""), **vars(view)})
        if len(found) >= limit:
            break
    return found


def build_digest(subscription: Subscription, now: datetime, index: SimilarityIndex | None = None) -> Digest:
    """The digest `subscription` would get at `now` (reads only)."""
    since = digest_since(subscription, now)
    matching = new_scores(subscription, since, now)
    scores = list(matching[:MAX_ITEMS])
    repos_by_paper: dict[int, list[CodeRepo]] = {}
    links = PaperRepo.objects.filter(paper_id__in=[s.paper_id for s in scores]).select_related("repo")
    for link in links.order_by("-official", "repo__full_name"):
        repos_by_paper.setdefault(link.paper_id, []).append(link.repo)
    if scores and index is None:
        index = SimilarityIndex.build()
    items = [
        DigestItem(
            paper=s.paper, score=s, facts=top_facts(s.paper_id), repos=repos_by_paper.get(s.paper_id, []),
            similar=index.nearest(s.paper_id, SIMILAR_PER_PAPER) if index else [],
        )
        for s in scores
    ]
    items.sort(key=lambda item: item.score.quadrant != Score.Quadrant.QUICK_WIN)  # stable: best first within each
    total = len(scores) if len(scores) < MAX_ITEMS else matching.count()
    return Digest(subscription, since, now, items, total)

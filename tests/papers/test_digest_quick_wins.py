"""The digest opens with the value matrix's high-value, low-cost papers, in their own section."""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from papers.digest import subscriptions, tokens
from papers.digest.emails import digest_message
from papers.digest.selectors import build_digest
from papers.models import Paper, Score, Subscription

NOW = datetime(2024, 12, 30, 8, 0, tzinfo=UTC)


def _scored(arxiv_id: str, title: str, total: float, quadrant: str, screening: dict | None = None) -> None:
    paper = Paper.objects.create(arxiv_id=arxiv_id, title=title, status="extracted")
    Score.objects.create(screening=screening or {},paper=paper, total=total, code_availability=1, experimental_realism=1,
                         parameter_transparency=1, community_feedback=1, tier="to_verify", production_value=3.5,
                         implementation_cost=1.0 if quadrant == "quick_win" else 3.0, quadrant=quadrant,
                         fingerprint=f"fp-{arxiv_id}", scored_at=NOW - timedelta(days=1))


@pytest.mark.django_db
def test_quick_wins_come_first_in_their_own_section_even_below_a_higher_total():
    _scored("2401.00001", "A major project with the best total", 9.0, "major_project")
    _scored("2401.00002", "A quick win", 6.0, "quick_win")
    _scored("2401.00003", "A fill-in", 4.0, "fill_in")
    _scored("2401.00004", "Another quick win", 5.0, "quick_win")
    subscription = Subscription.objects.create(email="member@example.org")
    subscription = subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW - timedelta(days=3))
    digest = build_digest(subscription, NOW)
    assert [(heading, [i.paper.title for i in items]) for heading, items in digest.sections] == [
        ("High value, low cost", ["A quick win", "Another quick win"]),
        ("Other new papers", ["A major project with the best total", "A fill-in"]),
    ]
    message = digest_message(digest)
    text = message.body
    assert text.index("== High value, low cost ==") < text.index("1. A quick win") < text.index("2. Another quick win")
    assert text.index("2. Another quick win") < text.index("== Other new papers ==") < text.index("1. A major project")
    html = message.alternatives[0][0]
    assert re.findall(r"<h2[^>]*>([^<]+)</h2>", html) == ["High value, low cost", "Other new papers"]


@pytest.mark.django_db
def test_without_quick_wins_the_digest_has_no_empty_first_section():
    _scored("2401.00001", "A fill-in", 4.0, "fill_in")
    subscription = Subscription.objects.create(email="member@example.org")
    subscription = subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW - timedelta(days=3))
    digest = build_digest(subscription, NOW)
    assert [heading for heading, _ in digest.sections] == ["Other new papers"]
    assert "High value, low cost" not in digest_message(digest).body


@pytest.mark.django_db
def test_a_neighbour_paper_screening_set_aside_is_not_news():
    _scored("2401.00001", "A serving paper", 4.0, "fill_in", {"serving_focus": {"answer": "yes", "evidence": "title"}})
    _scored("2401.00002", "A pruning method", 4.5, "fill_in",
            {"serving_focus": {"answer": "no", "evidence": "a neighbour, not a serving paper"}})
    subscription = Subscription.objects.create(email="member@example.org")
    subscription = subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW - timedelta(days=3))
    digest = build_digest(subscription, NOW)
    assert [[i.paper.title for i in items] for _, items in digest.sections] == [["A serving paper"]]

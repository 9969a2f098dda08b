"""Every paper a digest links, as an item or under "More like this", opens: an arXiv paper at its
abstract, a paper without an arXiv id (an uploaded PDF, keyed sha256:…) at its page on this site.

Found in review: uploaded papers were linked as https://arxiv.org/abs/sha256:….
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from papers.digest import subscriptions, tokens
from papers.digest.emails import digest_message
from papers.digest.selectors import build_digest
from papers.models import Paper, Score, Subscription
from tests.frontend.conftest import web  # noqa: F401  (fixture: users and the frontend's data)

NOW = datetime(2024, 12, 30, 8, 0, tzinfo=UTC)
UPLOADED = "sha256:0123456789abcdef"
ARXIV = "2401.00001"


def _scored(key: str, title: str, abstract: str, total: float) -> None:
    paper = Paper.objects.create(arxiv_id=key, title=title, abstract=abstract, status="extracted")
    Score.objects.create(paper=paper, total=total, code_availability=1, experimental_realism=1,
                         parameter_transparency=1, community_feedback=1, tier="to_verify", production_value=3.5,
                         implementation_cost=3.0, quadrant="major_project", fingerprint=f"fp-{key}",
                         scored_at=NOW - timedelta(days=1))


@pytest.mark.django_db
def test_a_paper_without_an_arxiv_id_is_linked_to_its_page_here(settings):
    settings.SITE_URL = "https://wiki.example.org"
    _scored(ARXIV, "Paged KV cache for LLM serving", "We page the KV cache of LLM serving engines.", 8.0)
    _scored(UPLOADED, "Paging the KV cache of LLM servers", "A paged KV cache for serving LLMs.", 7.0)
    subscription = Subscription.objects.create(email="member@example.org")
    subscription = subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW - timedelta(days=3))
    message = digest_message(build_digest(subscription, NOW))
    text, html = message.body, message.alternatives[0][0]

    own_page = "https://wiki.example.org/papers/sha256:0123456789abcdef/"
    for part in (text, html):
        assert "arxiv.org/abs/sha256" not in part
        assert part.count(own_page) == 2  # its own item, and "More like this" under the arXiv paper
        assert part.count(f"https://arxiv.org/abs/{ARXIV}") == 2
    under_arxiv_paper, under_uploaded_paper = re.findall(r"More like this: (.+?)</p>", html)
    assert f'href="{own_page}"' in under_arxiv_paper
    assert f'href="https://arxiv.org/abs/{ARXIV}"' in under_uploaded_paper


@pytest.mark.django_db
def test_the_linked_page_of_an_uploaded_paper_exists(web):  # noqa: F811
    _scored(UPLOADED, "An uploaded paper", "", 5.0)
    assert Client().get("/papers/sha256:0123456789abcdef/").status_code == 200

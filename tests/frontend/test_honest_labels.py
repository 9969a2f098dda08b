"""Honest labels: "New this week" means published on arXiv, or first crawled, in the last 7 days
(the seed list and the knowledge pack are not new), and a paper nobody has read says "not read yet", not a low score."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from papers.models import Paper, Score
from papers.selectors import papers_new_since, top_scored_papers
from tests.frontend.data import _score

pytestmark = pytest.mark.django_db


def _week_ago():
    return timezone.now() - timedelta(days=7)


def test_seed_and_pack_papers_created_today_are_not_new_this_week() -> None:
    Paper.objects.create(arxiv_id="2309.06180", version=0, title="a seed entry, no arXiv date")
    Paper.objects.create(arxiv_id="2401.08671", version=1, title="from the pack", status=Paper.Status.EXTRACTED,
                         published=timezone.now() - timedelta(days=700))
    Paper.objects.create(arxiv_id="2611.00001", version=1, title="crawled, published two days ago",
                         published=timezone.now() - timedelta(days=2))
    assert [p.arxiv_id for p in papers_new_since(_week_ago())] == ["2611.00001"]



def test_an_old_paper_a_crawl_found_this_week_is_new_and_a_seed_entry_it_filled_in_is_not(corpus_dir) -> None:
    from papers.services import import_atom_files

    Paper.objects.create(arxiv_id="2204.08348", version=0, title="a seed entry the crawl fills in")
    import_atom_files(sorted((corpus_dir / "arxiv_atom" / "arxiv_py_2026_recorded").glob("*.body.xml")))
    crawled = Paper.objects.exclude(arxiv_id="2204.08348").filter(first_crawled_at__isnull=False)
    assert crawled.exists() and not Paper.objects.get(arxiv_id="2204.08348").first_crawled_at
    old = crawled.filter(published__lt=_week_ago())
    assert old.exists()  # the recorded answers are years old: only the crawl's first sight makes them new
    new = [p.arxiv_id for p in papers_new_since(_week_ago(), limit=1000)]
    assert set(old.values_list("arxiv_id", flat=True)) <= set(new) and "2204.08348" not in new

def test_an_unread_papers_score_is_shown_as_not_read_yet(client) -> None:
    unread = Paper.objects.create(arxiv_id="2611.00002", version=1, title="Unread but crawled",
                                  published=timezone.now() - timedelta(days=1))
    read = Paper.objects.create(arxiv_id="2611.00003", version=1, title="Read and extracted",
                                published=timezone.now() - timedelta(days=1), status=Paper.Status.EXTRACTED)
    _score(unread, 2.0, Score.Tier.TO_VERIFY)
    _score(read, 7.0, Score.Tier.RECOMMENDED)
    assert [p.arxiv_id for p in top_scored_papers()] == ["2611.00003"]  # unread ones are not ranked
    dashboard = client.get(reverse("frontend:dashboard")).content.decode()
    assert "arXiv:2611.00002 · not read yet" in dashboard and "score 2.0/10" not in dashboard
    assert "score 7.0/10" in dashboard
    page = client.get(reverse("frontend:paper", args=["2611.00002"])).content.decode()
    assert "Not read yet" in page and "2.0/10" not in page
    listing = client.get(reverse("frontend:paper-list")).content.decode()
    assert "not read yet" in listing

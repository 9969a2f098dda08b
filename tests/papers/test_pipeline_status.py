"""The dashboard's pipeline panel: per stage what is done, what waits, the recent rate and an ETA."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from papers.models import Paper, PipelineEvent
from papers.selectors import RATE_WINDOW, pipeline_status

pytestmark = pytest.mark.django_db


def _stage(key: str) -> dict:
    return next(s for s in pipeline_status()["stages"] if s["key"] == key)


def test_a_stage_that_moved_recently_has_a_rate_and_an_eta_that_drains_its_queue(client) -> None:
    waiting = [Paper.objects.create(arxiv_id=f"2401.001{n:02d}", title=f"waits {n}", version=1,
                                    pdf_path=f"/pdfs/{n}.pdf", status=Paper.Status.DOWNLOADED) for n in range(30)]
    done = [Paper.objects.create(arxiv_id=f"2401.002{n:02d}", title=f"parsed {n}", version=1,
                                 pdf_path=f"/pdfs/p{n}.pdf", status=Paper.Status.PARSED) for n in range(15)]
    for paper in done:
        PipelineEvent.objects.create(stage="parse", paper=paper, message="parsed")
    old = PipelineEvent.objects.create(stage="parse", paper=waiting[0], message="parsed long ago")
    PipelineEvent.objects.filter(pk=old.pk).update(created_at=timezone.now() - RATE_WINDOW - timedelta(minutes=1))
    PipelineEvent.objects.create(stage="parse", paper=waiting[1], message="failed", level=PipelineEvent.Level.ERROR)

    before = timezone.now()
    parsed = _stage("parsed")
    per_min = 15 / (RATE_WINDOW.total_seconds() / 60)  # only this window's successful steps count
    assert parsed["waiting"] == 30 and parsed["per_min"] == round(per_min, 1)
    expected = before + timedelta(minutes=30 / per_min)
    assert abs((parsed["eta"] - expected).total_seconds()) < 60
    page = client.get(reverse("frontend:dashboard")).content.decode()
    assert f"30 waiting · {round(per_min, 1)}/min · done by about {parsed['eta']:%H:%M} UTC" in page


def test_a_queue_that_is_not_moving_has_no_eta_and_says_so(client) -> None:
    Paper.objects.create(arxiv_id="2401.00301", title="waits", version=1, pdf_path="/pdfs/x.pdf",
                         status=Paper.Status.DOWNLOADED)
    parsed = _stage("parsed")
    assert parsed["waiting"] == 1 and parsed["per_min"] == 0 and parsed["eta"] is None
    assert "1 waiting · not moving now" in client.get(reverse("frontend:dashboard")).content.decode()

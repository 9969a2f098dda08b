"""Whether arXiv answers, and the work that waits for it: the first-run crawl and the waiting PDFs.

Called by the crawl and download tasks after each attempt, by the periodic resume task (beat,
every RESUME_EVERY_S, and once at `make run`) and by the dashboard. Offline, nothing is queued but
one crawl attempt per resume tick, so the workers are not flooded with downloads that cannot work;
when arXiv answers again the resume task queues the waiting PDFs, politely spaced.
"""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.models import Paper, SourceHealth

ARXIV = "arxiv"
REQUEUE_AFTER = timedelta(hours=1)  # a queued download not done by then was lost (worker restart): queue it again


def health(name: str = ARXIV) -> SourceHealth | None:
    return SourceHealth.objects.filter(name=name).first()


def mark_reachable(name: str = ARXIV) -> None:
    now = timezone.now()
    SourceHealth.objects.update_or_create(name=name, defaults={
        "reachable": True, "unreachable_since": None, "last_ok_at": now, "last_error": "", "next_try_at": None,
        "checked_at": now})


def mark_unreachable(error: str, retry_in_s: float, name: str = ARXIV) -> None:
    """Record a failed attempt; `unreachable_since` keeps the first failure of the outage."""
    now = timezone.now()
    with transaction.atomic():
        row, _ = SourceHealth.objects.select_for_update().get_or_create(name=name)
        row.reachable = False
        row.unreachable_since = row.unreachable_since or now
        row.last_error = error[:2000]
        row.next_try_at = now + timedelta(seconds=retry_in_s)
        row.checked_at = now
        row.save()


def crawl_due(now=None) -> bool:
    """A crawl should start now: arXiv was never tried, or it was unreachable and the next try is due."""
    row = health()
    now = now or timezone.now()
    return row is None or row.reachable is None or (
        row.reachable is False and (row.next_try_at is None or row.next_try_at <= now))


def waiting_for_pdf() -> Q:
    """Papers whose PDF is still to be fetched: not read, none stored, a link to fetch it from."""
    return Q(status=Paper.Status.NEW, pdf_path="") & ~Q(pdf_url="")


def claim_waiting_pdfs(limit: int) -> list[int]:
    """Claim up to `limit` papers waiting for their PDF (conditional update: two resume ticks or two
    beat processes never queue the same download twice); returns their ids."""
    now = timezone.now()
    unclaimed = Q(pdf_queued_at__isnull=True) | Q(pdf_queued_at__lt=now - REQUEUE_AFTER)
    with transaction.atomic():
        ids = list(Paper.objects.filter(waiting_for_pdf() & unclaimed).order_by("id")
                   .select_for_update(skip_locked=True).values_list("pk", flat=True)[:limit])
        Paper.objects.filter(pk__in=ids).update(pdf_queued_at=now)
    return ids


def polite_countdowns(count: int) -> list[float]:
    """Start offsets for `count` downloads, ARXIV_DELAY_S apart (arXiv asks for one request every 3 s)."""
    return [n * settings.ARXIV_DELAY_S for n in range(count)]

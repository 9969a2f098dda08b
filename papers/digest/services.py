"""Sends the weekly digests: each due subscriber is claimed once per period, then mailed.

Runs from Celery beat ("papers.tasks.send_digests_task", weekly) and `manage.py send_digest`.
Claiming is a conditional UPDATE on `next_digest_at` (the healthchecks `sendreports` pattern): of
any number of concurrent senders exactly one gets rowcount 1 for a subscriber, so nobody is
mailed twice. A failed send is recorded on the period's DigestDelivery and the subscriber is made
due again after DIGEST_RETRY_DELAY_S, until DIGEST_MAX_FAILED_RUNS, then the period is skipped.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.utils import timezone

from papers.digest.emails import send_digest_email
from papers.digest.selectors import Digest, build_digest
from papers.digest.similar import SimilarityIndex
from papers.models import DigestDelivery, Subscription

log = logging.getLogger(__name__)
PERIOD = timedelta(days=7)


def period_start(now: datetime) -> datetime:
    """Monday 00:00 UTC of the week holding `now`: the digest period's key."""
    utc = now.astimezone(UTC)
    monday = utc - timedelta(days=utc.weekday())
    return monday.replace(hour=0, minute=0, second=0, microsecond=0)


def next_period_start(now: datetime) -> datetime:
    return period_start(now) + PERIOD


@dataclass
class SendReport:
    sent: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # claimed by another sender, or done this period

    def __str__(self) -> str:
        return (f"sent {len(self.sent)}, nothing new for {len(self.empty)}, failed {len(self.failed)}, "
                f"skipped {len(self.skipped)}")


def due_subscriptions(now: datetime, email: str | None = None):
    due = Subscription.objects.filter(status=Subscription.Status.ACTIVE, next_digest_at__lte=now)
    if email:
        due = due.filter(email=email.strip().lower())
    return due.order_by("next_digest_at", "id")


def claim(subscription: Subscription, now: datetime) -> bool:
    """Take `subscription` for this period; True for exactly one of any concurrent callers."""
    claimed = Subscription.objects.filter(
        id=subscription.id, status=Subscription.Status.ACTIVE, next_digest_at=subscription.next_digest_at
    ).update(next_digest_at=next_period_start(now))
    return claimed == 1


def _send_with_retries(digest: Digest) -> tuple[int, str]:
    """(attempts used, last error or ""): a few quick tries absorb a flaky SMTP connection."""
    error = ""
    for attempt in range(1, settings.DIGEST_SEND_ATTEMPTS + 1):
        try:
            send_digest_email(digest)
            return attempt, ""
        except Exception as exc:  # SMTP and socket errors vary; every one is recorded and retried
            error = f"{type(exc).__name__}: {exc}"
            log.warning("digest to %s failed (attempt %d): %s", digest.subscription.email, attempt, error)
            if attempt < settings.DIGEST_SEND_ATTEMPTS:
                time.sleep(0.5 * 2 ** (attempt - 1))
    return settings.DIGEST_SEND_ATTEMPTS, error


def deliver(subscription: Subscription, now: datetime, index: SimilarityIndex | None = None) -> str:
    """Build and send a claimed subscriber's digest for this period; returns the delivery status."""
    delivery, _ = DigestDelivery.objects.get_or_create(
        subscription=subscription, period_start=period_start(now), defaults={"status": DigestDelivery.Status.FAILED}
    )
    if delivery.status in (DigestDelivery.Status.SENT, DigestDelivery.Status.EMPTY):
        return "skipped"
    digest = build_digest(subscription, now, index)
    delivery.scores_since = digest.since
    delivery.paper_ids = [item.paper.arxiv_id for item in digest.items]
    if not digest.items:
        delivery.status, delivery.sent_at = DigestDelivery.Status.EMPTY, now
        delivery.save()
        return "empty"
    attempts, error = _send_with_retries(digest)
    delivery.attempts += attempts
    if not error:
        delivery.status, delivery.sent_at, delivery.error = DigestDelivery.Status.SENT, now, ""
        delivery.save()
        Subscription.objects.filter(id=subscription.id).update(last_digest_at=now)
        return "sent"
    delivery.error = error
    failed_runs = -(-delivery.attempts // settings.DIGEST_SEND_ATTEMPTS)
    if failed_runs >= settings.DIGEST_MAX_FAILED_RUNS:
        delivery.status = DigestDelivery.Status.GAVE_UP
    else:
        delivery.status = DigestDelivery.Status.FAILED
        # Due again soon (only if nobody changed it since our claim), so the retried task picks it up.
        Subscription.objects.filter(id=subscription.id, next_digest_at=next_period_start(now)).update(
            next_digest_at=now + timedelta(seconds=settings.DIGEST_RETRY_DELAY_S)
        )
    delivery.save()
    return "failed"


def send_due_digests(now: datetime | None = None, email: str | None = None) -> SendReport:
    """Claim and send every due subscriber's digest (or only `email`'s); safe to run concurrently."""
    now = now or timezone.now()
    report = SendReport()
    index: SimilarityIndex | None = None
    for subscription in due_subscriptions(now, email):
        if not claim(subscription, now):
            report.skipped.append(subscription.email)
            continue
        if index is None:
            index = SimilarityIndex.build()  # one embedding pass per run, shared by all digests
        outcome = deliver(subscription, now, index)
        getattr(report, outcome).append(subscription.email)
    return report

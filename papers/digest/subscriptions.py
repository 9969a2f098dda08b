"""Subscription services: subscribe (double opt-in), confirm, unsubscribe, update preferences.

Called by the digest views (papers.views) and the API. The links in its emails carry the signed
tokens of papers.digest.tokens, so no login is needed. Errors are SubscriptionError with a message a
person can act on ("this link expired: subscribe again").

A confirmation link confirms once: confirming is a conditional UPDATE on the link's nonce (the
claim pattern of papers.digest.services), which empties it; a newer confirmation email replaces it
and unsubscribing empties it, so an old link replayed (by a mail scanner or anyone else) can never
re-subscribe an address that left.
"""
from __future__ import annotations

import logging
import smtplib
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from papers.digest.emails import send_confirmation_email
from papers.digest.tokens import SubscriptionError, read_confirm_token, read_token
from papers.models import Subscription
from papers.models.digest import new_confirm_nonce
from papers.scoring.topics import TOPICS

log = logging.getLogger(__name__)


def clean_preferences(topics: Iterable[str], min_score: float) -> tuple[list[str], float]:
    chosen = sorted(set(topics))
    unknown = [t for t in chosen if t not in TOPICS]
    if unknown:
        raise SubscriptionError(f"Unknown topic(s) {', '.join(unknown)}; choose from {', '.join(TOPICS)}.")
    try:
        score = float(min_score)
    except (TypeError, ValueError):
        raise SubscriptionError(f"Minimum score {min_score!r} is not a number between 0 and 10.") from None
    if not 0 <= score <= 10:
        raise SubscriptionError(f"Minimum score {score:g} is outside 0–10.")
    return chosen, score


CONFIRMATION_RESEND_INTERVAL = timedelta(minutes=10)


def subscribe(email: str, topics: Iterable[str] = (), min_score: float = 0.0,
              now: datetime | None = None) -> Subscription:
    """Record (or renew) a pending subscription and email the confirmation link.

    An address that is already active keeps its preferences (anyone can type any address); it
    just gets the confirmation email again, whose link leads to its settings. One address gets at
    most one confirmation email per CONFIRMATION_RESEND_INTERVAL, so the form cannot be used to
    flood someone's inbox.
    """
    now = now or timezone.now()
    address = email.strip().lower()
    try:
        validate_email(address)
    except ValidationError:
        raise SubscriptionError(f"{email!r} is not an email address.") from None
    chosen, score = clean_preferences(topics, min_score)
    with transaction.atomic():
        subscription, _ = Subscription.objects.select_for_update().get_or_create(email=address)
        last = subscription.confirmation_sent_at
        if last and now - last < CONFIRMATION_RESEND_INTERVAL:
            raise SubscriptionError(
                f"We sent a confirmation email to {address} a few minutes ago: check that inbox (and its spam "
                "folder), or try again in 10 minutes."
            )
        if subscription.status != Subscription.Status.ACTIVE:
            subscription.status = Subscription.Status.PENDING
            subscription.topics, subscription.min_score = chosen, score
        subscription.confirmation_sent_at, subscription.confirm_nonce = now, new_confirm_nonce()
        subscription.save(update_fields=["status", "topics", "min_score", "confirmation_sent_at", "confirm_nonce"])
    try:
        send_confirmation_email(subscription)
    except (smtplib.SMTPException, OSError) as exc:  # the row stays pending; asking again resends
        log.warning("confirmation email to %s failed: %s", address, exc)
        Subscription.objects.filter(pk=subscription.pk).update(confirmation_sent_at=None)
        raise SubscriptionError(
            "We could not send the confirmation email just now. Please try again in a few minutes."
        ) from exc
    return subscription


def _refuse_unusable(subscription: Subscription) -> None:
    """SubscriptionError saying why a confirmation link whose nonce is not the current one fails."""
    if subscription.confirm_nonce:
        raise SubscriptionError("A newer confirmation email replaced this link: use the link in the most recent "
                                "email from InfraWiki.")
    if subscription.status == Subscription.Status.UNSUBSCRIBED:
        raise SubscriptionError(f"This link was already used, and {subscription.email} has unsubscribed since. "
                                "To get the digest again, subscribe again.")
    raise SubscriptionError(f"This link was already used: {subscription.email} is subscribed. Each digest has a "
                            "link to change its settings.")


def confirmable(token: str) -> Subscription:
    """The subscription a confirmation link may still confirm (what the page with the button shows);
    SubscriptionError when the link expired, was used, or was replaced by a newer one. Writes nothing."""
    subscription, nonce = read_confirm_token(token)
    if subscription.confirm_nonce != nonce:
        _refuse_unusable(subscription)
    return subscription


def confirm(token: str, now: datetime | None = None) -> Subscription:
    """Use a confirmation link: activate the subscription it names (its first digest is due at once),
    or, for an address already active that asked again, just use up the link. Exactly one of any
    concurrent uses of a link succeeds; the others get SubscriptionError like any used link."""
    now = now or timezone.now()
    subscription, nonce = read_confirm_token(token)
    current = Subscription.objects.filter(pk=subscription.pk, email=subscription.email, confirm_nonce=nonce)
    claimed = current.filter(status=Subscription.Status.PENDING).update(
        status=Subscription.Status.ACTIVE, confirm_nonce="", confirmed_at=now, unsubscribed_at=None,
        next_digest_at=now,
    ) or current.filter(status=Subscription.Status.ACTIVE).update(confirm_nonce="")
    subscription.refresh_from_db()
    if not claimed:
        _refuse_unusable(subscription)
    return subscription


def unsubscribe(token: str, now: datetime | None = None) -> Subscription:
    """Stop all digests to the address the token names (idempotent); every confirmation link sent
    to it stops working, so none can undo this."""
    subscription = read_token(token, "manage")
    if subscription.status != Subscription.Status.UNSUBSCRIBED:
        subscription.status = Subscription.Status.UNSUBSCRIBED
        subscription.unsubscribed_at, subscription.next_digest_at = now or timezone.now(), None
        subscription.confirm_nonce = ""
        subscription.save(update_fields=["status", "unsubscribed_at", "next_digest_at", "confirm_nonce"])
    return subscription


def update_preferences(subscription: Subscription, topics: Iterable[str], min_score: float) -> Subscription:
    subscription.topics, subscription.min_score = clean_preferences(topics, min_score)
    subscription.save(update_fields=["topics", "min_score"])
    return subscription

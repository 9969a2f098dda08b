"""Signed, expiring links in digest emails: confirm a subscription, unsubscribe, open its settings.

Used by the emails (papers.digest.emails), the subscription services and the digest views. A token
(django.core.signing) names the subscription and its address, so no login is needed and a token
cannot be reused for another address. A confirmation token also carries the subscription's current
`confirm_nonce`: the next confirmation email, using the link, or unsubscribing replaces or empties
it, so each confirmation link works once and only while it is the latest.
"""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.urls import reverse

from papers.models import Subscription


class SubscriptionError(ValueError):
    """A request about a subscription that cannot be carried out; the message says what to do."""


def _salt(purpose: str) -> str:
    return f"papers.digest.{purpose}"


def make_token(subscription: Subscription, purpose: str) -> str:
    """A signed token for one purpose: "confirm" or "manage" (unsubscribe and settings links)."""
    payload: dict[str, object] = {"id": subscription.id, "email": subscription.email}
    if purpose == "confirm":
        payload["nonce"] = subscription.confirm_nonce
    return signing.dumps(payload, salt=_salt(purpose), compress=True)


def read_confirm_token(token: str) -> tuple[Subscription, str]:
    """The subscription a confirmation token names and the nonce it carries (compare with
    `subscription.confirm_nonce` to know whether the link is still the usable one)."""
    subscription, data = _read(token, "confirm")
    if not (isinstance(data.get("nonce"), str) and data["nonce"]):
        raise SubscriptionError("This link is not valid: copy the whole link from the latest email.")
    return subscription, data["nonce"]


def read_token(token: str, purpose: str) -> Subscription:
    return _read(token, purpose)[0]


def _read(token: str, purpose: str) -> tuple[Subscription, dict]:
    max_days = settings.DIGEST_CONFIRM_MAX_AGE_DAYS if purpose == "confirm" else settings.DIGEST_LINK_MAX_AGE_DAYS
    try:
        data = signing.loads(token, salt=_salt(purpose), max_age=timedelta(days=max_days))
    except signing.SignatureExpired:
        raise SubscriptionError(
            f"This link expired (links are valid for {max_days} days). Use the link in a newer email, "
            "or subscribe again."
        ) from None
    except signing.BadSignature:
        raise SubscriptionError("This link is not valid: copy the whole link from the email.") from None
    if not (isinstance(data, dict) and type(data.get("id")) is int and isinstance(data.get("email"), str)):
        raise SubscriptionError("This link is not valid: copy the whole link from the email.")
    subscription = Subscription.objects.filter(id=data["id"], email=data["email"]).first()
    if subscription is None:
        raise SubscriptionError("This subscription no longer exists: subscribe again.")
    return subscription, data


def link(subscription: Subscription, purpose: str, view: str) -> str:
    """An absolute link (SITE_URL) to a digest view carrying a fresh token."""
    return settings.SITE_URL + reverse(view, args=[make_token(subscription, purpose)])

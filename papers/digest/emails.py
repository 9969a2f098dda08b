"""The digest app's emails, one function per email, each from named subject/text/HTML templates.

Templates live in papers/templates/papers/email/<name>_{subject.txt,body.txt,body.html}. Called by
papers.digest.subscriptions (confirmation) and papers.digest.services (the weekly digest); the dry run
prints the same message the real send would deliver.
"""
from __future__ import annotations

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from papers.digest.selectors import Digest
from papers.digest.tokens import link
from papers.models import Subscription
from papers.scoring.topics import TOPICS


def render_email(name: str, context: dict, to: str, headers: dict | None = None) -> EmailMultiAlternatives:
    """A text+HTML message from the templates papers/email/<name>_*."""
    subject = " ".join(render_to_string(f"papers/email/{name}_subject.txt", context).split())
    text = render_to_string(f"papers/email/{name}_body.txt", context)
    html = render_to_string(f"papers/email/{name}_body.html", context)
    message = EmailMultiAlternatives(subject, text, settings.DEFAULT_FROM_EMAIL, [to], headers=headers or {})
    message.attach_alternative(html, "text/html")
    return message


def send_confirmation_email(subscription: Subscription) -> None:
    """Double opt-in: the link that activates the subscription (or, if active, opens its settings)."""
    context = {
        "subscription": subscription,
        "confirm_url": link(subscription, "confirm", "papers:confirm"),
        "topics": [TOPICS[t][0] for t in subscription.topics],
        "site_url": settings.SITE_URL,
    }
    render_email("confirm", context, subscription.email).send()


def digest_message(digest: Digest) -> EmailMultiAlternatives:
    """The weekly digest, with one-click unsubscribe (RFC 8058 List-Unsubscribe + List-Unsubscribe-Post)."""
    subscription = digest.subscription
    unsubscribe_url = link(subscription, "manage", "papers:unsubscribe")
    context = {
        "digest": digest,
        "items": digest.items,
        "subscription": subscription,
        "unsubscribe_url": unsubscribe_url,
        "settings_url": link(subscription, "manage", "papers:settings"),
        "site_url": settings.SITE_URL,
    }
    headers = {"List-Unsubscribe": f"<{unsubscribe_url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    return render_email("digest", context, subscription.email, headers)


def send_digest_email(digest: Digest) -> None:
    """Deliver one digest; raises on SMTP failure so the caller can retry and record it."""
    digest_message(digest).send(fail_silently=False)

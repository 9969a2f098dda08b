"""Subscribing to the digest: double opt-in over real SMTP, signed expiring links, one-click unsubscribe."""
from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.core import signing
from django.test import Client

from papers.digest import subscriptions, tokens
from papers.models import Subscription
from tests.papers.smtp_sink import free_port, smtp_server_fixture  # noqa: F401  (the smtp_server fixture)

pytestmark = pytest.mark.django_db
OWNER = "owner@example.org"
NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def links_in(text: str) -> list[str]:
    return re.findall(r"http://testserver(/digest/[^\s\"<>]+)", text)


def test_subscribing_emails_a_confirmation_link_that_activates_the_subscription(smtp_server):
    page = Client().post("/digest/", {"email": "Owner@Example.org", "topics": ["kv-cache", "scheduling"],
                                      "min_score": "6"})
    assert page.status_code == 200 and b"Check your inbox" in page.content
    subscription = Subscription.objects.get(email=OWNER)
    assert subscription.status == "pending" and subscription.topics == ["kv-cache", "scheduling"]
    assert subscription.min_score == 6

    [mail] = smtp_server.received
    assert mail.rcpt_tos == [OWNER] and mail.message["To"] == OWNER
    assert mail.message["Subject"].strip() == "Confirm your InfraWiki digest subscription"
    text, html = mail.part("text/plain"), mail.part("text/html")
    assert "KV cache and memory management, Batching and scheduling" in text
    [confirm_path] = links_in(text)
    assert confirm_path.startswith("/digest/confirm/") and confirm_path in html

    client = Client(enforce_csrf_checks=True)
    shown = client.get(confirm_path)
    assert shown.status_code == 200 and b"Confirm subscription" in shown.content
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', shown.content.decode()).group(1)
    confirmed = client.post(confirm_path, {"csrfmiddlewaretoken": csrf})
    assert confirmed.status_code == 200 and b"Subscription confirmed" in confirmed.content
    subscription.refresh_from_db()
    assert subscription.status == "active" and subscription.next_digest_at is not None


def test_a_bad_address_or_topic_is_refused_with_a_message_and_nothing_is_sent(smtp_server):
    page = Client().post("/digest/", {"email": "not-an-address", "min_score": "0"})
    assert page.status_code == 400 and b"Enter a valid email address" in page.content
    with pytest.raises(tokens.SubscriptionError, match="Unknown topic.*choose from kv-cache"):
        subscriptions.subscribe(OWNER, ["astrology"], 0)
    with pytest.raises(tokens.SubscriptionError, match="outside 0–10"):
        subscriptions.subscribe(OWNER, [], 11)
    assert smtp_server.received == [] and not Subscription.objects.exists()


def test_subscribing_again_while_active_keeps_the_preferences(smtp_server):
    subscription = subscriptions.subscribe(OWNER, ["quantization"], 7, now=NOW)
    subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW)
    subscriptions.subscribe(OWNER, [], 0, now=NOW + timedelta(minutes=11))  # anyone can type anyone's address
    subscription.refresh_from_db()
    assert subscription.status == "active" and subscription.topics == ["quantization"] and subscription.min_score == 7
    assert len(smtp_server.to(OWNER)) == 2


class _SignedDaysAgo(signing.TimestampSigner):
    """Signs as if `days` ago: frozen time for the token's clock only."""

    days = 8

    def timestamp(self) -> str:
        return signing.b62_encode(int(time.time()) - self.days * 86400)


def test_expired_and_tampered_links_are_refused_with_what_to_do(smtp_server):
    subscription = subscriptions.subscribe(OWNER)
    payload = {"id": subscription.id, "email": OWNER}
    old = _SignedDaysAgo(salt="papers.digest.confirm").sign_object(payload, compress=True)
    page = Client().get(f"/digest/confirm/{old}/")
    assert page.status_code == 400 and b"This link expired (links are valid for 7 days)" in page.content
    tampered = tokens.make_token(subscription, "confirm")[:-2] + "xx"
    assert b"not valid" in Client().get(f"/digest/confirm/{tampered}/").content
    wrong_purpose = tokens.make_token(subscription, "manage")
    assert Client().get(f"/digest/confirm/{wrong_purpose}/").status_code == 400
    subscription.refresh_from_db()
    assert subscription.status == "pending"


def test_one_click_unsubscribe_needs_a_post_and_no_csrf_token(smtp_server):
    subscription = subscriptions.subscribe(OWNER)
    subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW)
    path = f"/digest/unsubscribe/{tokens.make_token(subscription, 'manage')}/"
    client = Client(enforce_csrf_checks=True)
    shown = client.get(path)
    assert shown.status_code == 200 and b"Stop the weekly digest" in shown.content
    subscription.refresh_from_db()
    assert subscription.status == "active"  # a link scanner's GET changes nothing

    done = client.post(path, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded")
    assert done.status_code == 200 and b"Unsubscribed" in done.content
    subscription.refresh_from_db()
    assert subscription.status == "unsubscribed" and subscription.next_digest_at is None
    assert client.post(path).status_code == 200  # idempotent


def test_the_settings_link_changes_topics_and_minimum_score(smtp_server):
    subscription = subscriptions.subscribe(OWNER)
    subscriptions.confirm(tokens.make_token(subscription, "confirm"), NOW)
    path = f"/digest/settings/{tokens.make_token(subscription, 'manage')}/"
    client = Client()
    assert client.get(path).status_code == 200
    saved = client.post(path, {"topics": ["speculative-decoding"], "min_score": "5.5"})
    assert saved.status_code == 200 and b"Saved: Speculative decoding, minimum score 5.5" in saved.content
    subscription.refresh_from_db()
    assert subscription.topics == ["speculative-decoding"] and subscription.min_score == 5.5
    refused = client.post(path, {"min_score": "12"})
    assert refused.status_code == 400
    subscription.refresh_from_db()
    assert subscription.min_score == 5.5


def test_when_mail_cannot_be_sent_the_form_says_so_and_asking_again_works(smtp_server, settings):
    up_port, settings.EMAIL_PORT = settings.EMAIL_PORT, free_port()  # nothing listens there
    page = Client().post("/digest/", {"email": OWNER, "min_score": "0"})
    assert page.status_code == 400 and b"could not send the confirmation email just now" in page.content
    assert Subscription.objects.get(email=OWNER).status == "pending"
    settings.EMAIL_PORT = up_port
    assert Client().post("/digest/", {"email": OWNER, "min_score": "0"}).status_code == 200
    assert len(smtp_server.to(OWNER)) == 1


def test_one_address_gets_at_most_one_confirmation_email_per_ten_minutes(smtp_server):
    subscriptions.subscribe(OWNER, now=NOW)
    with pytest.raises(tokens.SubscriptionError, match="a few minutes ago: check that inbox"):
        subscriptions.subscribe(OWNER, now=NOW + timedelta(minutes=9))
    subscriptions.subscribe(OWNER, now=NOW + timedelta(minutes=10))
    assert len(smtp_server.to(OWNER)) == 2


@pytest.mark.parametrize("payload", [[1, 2], "text", 7, None, {"id": "1", "email": OWNER}, {"id": [1], "email": OWNER},
                                     {"id": 1, "email": ["x"]}, {"id": True, "email": OWNER}, {}])
@pytest.mark.parametrize("path,purpose", [("confirm", "confirm"), ("unsubscribe", "manage"), ("settings", "manage")])
def test_a_signed_link_whose_payload_has_the_wrong_shape_is_a_clear_400(payload, path, purpose):
    token = signing.dumps(payload, salt=f"papers.digest.{purpose}", compress=True)
    page = Client().get(f"/digest/{path}/{token}/")
    assert page.status_code == 400 and b"This link is not valid" in page.content

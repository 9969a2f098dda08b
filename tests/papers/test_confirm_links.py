"""A digest confirmation link confirms only when its button is pressed (POST), and only once.

Found in review: the link confirmed on GET, for 7 days, as often as it was opened; a mail scanner
that pre-fetches links confirmed for the owner, and replaying the link re-subscribed an address
that had unsubscribed.
"""
from __future__ import annotations

import re
import threading
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test import Client

from papers.digest import subscriptions, tokens
from papers.models import Subscription
from tests.papers.smtp_sink import smtp_server_fixture  # noqa: F401  (the smtp_server fixture)

OWNER = "owner@example.org"


def _confirm_path(smtp_server, n: int = -1) -> str:
    text = smtp_server.to(OWNER)[n].part("text/plain")
    return re.search(r"http://testserver(/digest/confirm/\S+/)", text).group(1)


def _press_confirm(path: str) -> object:
    client = Client(enforce_csrf_checks=True)
    shown = client.get(path)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', shown.content.decode())
    return client.post(path, {"csrfmiddlewaretoken": token.group(1) if token else ""})


def _status() -> str:
    return Subscription.objects.get(email=OWNER).status


@pytest.mark.django_db
def test_opening_the_link_only_shows_a_button(smtp_server):
    Client().post("/digest/", {"email": OWNER, "min_score": "0"})
    path = _confirm_path(smtp_server)
    for _ in range(3):  # a scanner, a preview pane, the person
        page = Client().get(path)
        assert page.status_code == 200 and b"Confirm subscription" in page.content and b'method="post"' in page.content
    assert _status() == "pending"
    assert _press_confirm(path).status_code == 200 and _status() == "active"


@pytest.mark.django_db
def test_the_confirm_button_needs_the_pages_csrf_token(smtp_server):
    Client().post("/digest/", {"email": OWNER, "min_score": "0"})
    assert Client(enforce_csrf_checks=True).post(_confirm_path(smtp_server)).status_code == 403
    assert _status() == "pending"


@pytest.mark.django_db
def test_a_used_link_is_refused_and_never_undoes_an_unsubscribe(smtp_server):
    Client().post("/digest/", {"email": OWNER, "min_score": "0"})
    path = _confirm_path(smtp_server)
    assert b"Subscription confirmed" in _press_confirm(path).content
    again = Client().get(path)
    assert again.status_code == 400 and b"already used" in again.content

    subscription = Subscription.objects.get(email=OWNER)
    Client().post(f"/digest/unsubscribe/{tokens.make_token(subscription, 'manage')}/")
    assert _status() == "unsubscribed"
    for replay in (Client().get(path), Client().post(path)):  # the test client skips CSRF: the strongest replay
        assert replay.status_code == 400 and b"unsubscribed since" in replay.content
    assert _status() == "unsubscribed"


@pytest.mark.django_db
def test_an_unused_link_dies_with_an_unsubscribe(smtp_server):
    subscription = subscriptions.subscribe(OWNER, now=datetime(2026, 11, 1, tzinfo=UTC))
    subscriptions.confirm(tokens.make_token(subscription, "confirm"))
    subscriptions.subscribe(OWNER)  # asked again while active: a new link, not used yet
    fresh = _confirm_path(smtp_server)
    subscriptions.unsubscribe(tokens.make_token(subscription, "manage"))
    assert Client().post(fresh).status_code == 400 and _status() == "unsubscribed"


@pytest.mark.django_db
def test_a_link_replaced_by_a_newer_email_is_refused_with_what_to_do(smtp_server):
    subscriptions.subscribe(OWNER, now=datetime(2026, 11, 1, tzinfo=UTC))
    old = _confirm_path(smtp_server)
    subscriptions.subscribe(OWNER)
    new = _confirm_path(smtp_server)
    refused = Client().post(old)
    assert refused.status_code == 400 and b"A newer confirmation email replaced this link" in refused.content
    assert _status() == "pending"
    assert _press_confirm(new).status_code == 200 and _status() == "active"


@pytest.mark.django_db(transaction=True)
def test_of_concurrent_uses_of_one_link_exactly_one_confirms(smtp_server):
    subscription = subscriptions.subscribe(OWNER)
    token = tokens.make_token(subscription, "confirm")
    outcomes: list[str] = []
    start = threading.Barrier(4)

    def use() -> None:
        start.wait()
        try:
            subscriptions.confirm(token)
            outcomes.append("confirmed")
        except tokens.SubscriptionError as exc:
            outcomes.append(str(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(outcomes) == 4 and outcomes.count("confirmed") == 1
    assert all("already used" in o for o in outcomes if o != "confirmed")
    assert _status() == "active"

"""Rate limits name the client by a trusted address, and guard logins, tokens and the subscribe form.

X-Forwarded-For is believed only as far as NUM_PROXIES trusted proxies; failed logins are limited per
account and per client on both the login form and POST /api/auth/token/; the digest subscribe form
sends one confirmation email per client per window, whatever addresses it types.
"""
from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from infrawiki import rate_counter
from infrawiki.models import RateCounter
from tests.frontend.conftest import web  # noqa: F401,F811  (fixture)
from tests.papers.smtp_sink import smtp_server_fixture  # noqa: F401  (the smtp_server fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("web")]


@pytest.fixture(autouse=True)
def small_login_limits(settings):
    """Smaller limits than the defaults keep the tests quick (each attempt hashes a password)."""
    settings.LOGIN_THROTTLE_ACCOUNT, settings.LOGIN_THROTTLE_CLIENT = "4/15m", "6/15m"


@pytest.fixture
def anon_rate_5(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "anon": "5/minute", "user": "3000/minute"}}


def test_a_new_x_forwarded_for_does_not_make_a_new_client_without_trusted_proxies(anon_rate_5):
    client = APIClient()
    codes = [client.get("/api/papers/", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}").status_code for n in range(20)]
    assert codes[:5] == [200] * 5 and set(codes[5:]) == {429}


def test_behind_one_trusted_proxy_the_address_it_saw_is_the_client(anon_rate_5, settings):
    settings.NUM_PROXIES = 1
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    client = APIClient()
    # Each request comes through the proxy from a different client: each has its own allowance.
    assert {client.get("/api/papers/", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}").status_code for n in range(8)} == {200}
    # A client that prepends forged hops is still the address the proxy appended.
    forged = [client.get("/api/papers/", HTTP_X_FORWARDED_FOR=f"1.2.3.{n}, 10.9.9.9").status_code for n in range(8)]
    assert forged[:5] == [200] * 5 and set(forged[5:]) == {429}


def _token(client: APIClient, password: str, **extra):
    return client.post("/api/auth/token/", {"username": "owner", "password": password}, format="json", **extra)


def test_the_token_endpoint_refuses_even_the_right_password_after_many_wrong_ones():
    client = APIClient()
    wrong = [_token(client, f"guess-{n}").status_code for n in range(12)]
    assert wrong[:4] == [400] * 4 and set(wrong[4:]) == {429}
    right = _token(client, "owner-pw-2026")
    assert right.status_code == 429 and right.json()["error"] == "too many requests"
    assert "token" not in right.json()


def test_failed_logins_are_counted_per_account_whatever_client_sends_them():
    client = APIClient()
    for n in range(4):
        assert _token(client, "wrong", REMOTE_ADDR=f"10.1.0.{n}").status_code == 400
    assert _token(client, "owner-pw-2026", REMOTE_ADDR="10.1.0.200").status_code == 429


def test_failed_logins_are_counted_per_client_whatever_accounts_it_tries(settings):
    client = Client()
    for n in range(6):
        assert client.post("/login/", {"username": f"user-{n}", "password": "x"}).status_code == 200
    blocked = client.post("/login/", {"username": "owner", "password": "owner-pw-2026"})
    assert blocked.status_code == 429 and b"Too many failed logins" in blocked.content
    assert "_auth_user_id" not in client.session
    assert Client(REMOTE_ADDR="10.2.0.1").post("/login/", {"username": "owner", "password": "owner-pw-2026"}
                                               ).status_code == 302


def test_the_token_endpoint_counts_failures_per_client_whatever_accounts_it_tries():
    client = APIClient()
    for n in range(6):
        response = client.post("/api/auth/token/", {"username": f"user-{n}", "password": "x"}, format="json")
        assert response.status_code == 400
    assert _token(client, "owner-pw-2026").status_code == 429
    assert _token(APIClient(REMOTE_ADDR="10.5.0.1"), "owner-pw-2026").status_code == 200

def test_the_login_form_locks_an_account_after_repeated_wrong_passwords():
    for n in range(4):
        Client(REMOTE_ADDR=f"10.3.0.{n}").post("/login/", {"username": "owner", "password": f"guess-{n}"})
    refused = Client().post("/login/", {"username": "owner", "password": "owner-pw-2026"})
    assert refused.status_code == 429
    assert 890 < int(refused["Retry-After"]) <= 900  # what is left of the 15-minute window that opened just now


def test_login_without_next_lands_on_a_page_that_exists():
    client = Client()
    response = client.post("/login/", {"username": "owner", "password": "owner-pw-2026"})
    assert response.status_code == 302
    assert client.get(response["Location"]).status_code == 200


def test_one_client_gets_one_confirmation_email_however_many_addresses_it_types(smtp_server):
    client = Client()
    codes = [client.post("/digest/", {"email": f"person{n}@example.org", "min_score": "0"}).status_code
             for n in range(15)]
    assert codes[0] == 200 and set(codes[1:]) == {429}
    assert len(smtp_server.received) == 1
    assert Client(REMOTE_ADDR="10.4.0.1").post("/digest/", {"email": "other@example.org", "min_score": "0"}
                                               ).status_code == 200
    assert len(smtp_server.received) == 2


def test_a_closed_window_restarts_the_count_and_closed_windows_are_purged():
    assert [rate_counter.hit("limit:test:a", 1)[0] for _ in range(3)] == [1, 2, 3]
    assert rate_counter.seen("limit:test:a")[0] == 3
    rate_counter.hit("limit:test:b", 1)
    time.sleep(1.2)
    assert rate_counter.seen("limit:test:a") == (0, 0)  # the window closed: nothing counts any more
    assert rate_counter.hit("limit:test:a", 60)[0] == 1  # the next event opens a new window...
    assert not RateCounter.objects.filter(key="limit:test:b").exists()  # ...and closed ones are dropped
    events, left = rate_counter.hit("limit:test:a", 60)
    assert events == 2 and 55 <= left <= 60


def test_the_counter_table_writes_no_wal():
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpersistence FROM pg_class WHERE oid = %s::regclass", [RateCounter._meta.db_table])
        assert cursor.fetchone() == ("u",)  # unlogged: counting a request costs no fsync

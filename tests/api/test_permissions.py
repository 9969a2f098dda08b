"""Who may do what over the API: anonymous readers, the owner of a subscription, an editor, an outsider."""
import pytest
from django.core import mail
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from papers.models.digest import Subscription
from tests.frontend.data import token_client

pytestmark = pytest.mark.django_db


def test_anonymous_callers_read_but_cannot_reach_a_subscription(web):
    anonymous = APIClient()
    assert anonymous.get("/api/papers/").status_code == 200
    response = anonymous.get("/api/me/subscription/")
    assert response.status_code == 401
    assert response.json()["error"] == "authentication required"
    assert "Token" in response.json()["hint"]


def test_a_bad_token_is_refused_with_a_clear_error(web):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get("/api/papers/")
    assert response.status_code == 401
    assert response.json()["error"] == "authentication failed"


def test_a_token_is_issued_for_a_username_and_password(web):
    response = APIClient().post("/api/auth/token/", {"username": "owner", "password": "owner-pw-2026"}, format="json")
    assert response.status_code == 200
    assert response.json()["token"] == Token.objects.get(user=web.users["owner"]).key


def test_the_owner_sees_and_changes_only_their_own_subscription(web):
    owner = token_client(web.users["owner"])
    body = owner.get("/api/me/subscription/").json()
    assert body == {**body, "email": "owner@example.org", "status": "active", "topics": ["kv-cache"], "min_score": 5.0}
    changed = owner.patch("/api/me/subscription/", {"min_score": 7}, format="json").json()
    assert changed["min_score"] == 7.0 and changed["topics"] == ["kv-cache"]
    assert owner.delete("/api/me/subscription/").json()["status"] == "unsubscribed"


def test_an_outsider_has_no_subscription_and_cannot_touch_the_owners(web):
    outsider = token_client(web.users["outsider"])
    response = outsider.get("/api/me/subscription/")
    assert response.status_code == 404
    assert "POST here to subscribe" in response.json()["detail"]
    assert outsider.patch("/api/me/subscription/", {"min_score": 0}, format="json").status_code == 404
    assert Subscription.objects.get(email="owner@example.org").min_score == 5.0


def test_subscribing_over_the_api_is_pending_until_the_emailed_link_is_opened(web):
    outsider = token_client(web.users["outsider"])
    response = outsider.post("/api/me/subscription/", {"topics": ["scheduling"], "min_score": 6}, format="json")
    assert response.status_code == 201
    assert response.json()["status"] == "pending"
    assert any("outsider@example.org" in m.to for m in mail.outbox)


def test_an_unknown_topic_is_a_400_that_names_the_choices(web):
    response = token_client(web.users["outsider"]).post("/api/me/subscription/", {"topics": ["cooking"]}, format="json")
    assert response.status_code == 400
    assert "cooking" in str(response.json()["detail"]) and "kv-cache" in str(response.json()["detail"])


def test_throttling_answers_429_with_when_to_retry(web, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "user": "2/minute"}}
    client = APIClient(REMOTE_ADDR="10.9.9.9")
    statuses = [client.get("/api/scores/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    body = client.get("/api/scores/").json()
    assert body["error"] == "too many requests" and body["hint"].startswith("Retry in")

"""A NUL character anywhere in a request (path, query, form, JSON) is a 400, never a server error.

PostgreSQL cannot hold NUL in text; before the middleware these reached the database and failed.
"""
from __future__ import annotations

import pytest
from django.test import Client

from tests.frontend.conftest import web  # noqa: F401  (fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("web")]

URLS = [
    "/api/papers/%00/", "/papers/?q=%00", "/search/?q=%00", "/papers/%00/", "/papers/a%00b/",
    "/parameters/%00/", "/entities/%00/", "/facts/?q=%00", "/review/?q=%00", "/advisor/result/?gpu=%00",
    "/api/papers/?q=%00", "/api/papers/?category=cs%00", "/api/facts/?q=%00", "/api/search?q=%00",
    "/api/entities/%00/", "/api/parameters/%00/", "/api/scores/%00/", "/api/repositories/a%00/b/",
    "/digest/confirm/%00/", "/digest/unsubscribe/%00/", "/digest/settings/%00/", "/?q%00=1", "/login/?next=%00",
]


@pytest.mark.parametrize("url", URLS)
def test_a_nul_in_the_url_is_a_400(url):
    response = Client().get(url)
    assert response.status_code == 400, (url, response.status_code)
    if url.startswith("/api/"):
        assert response.json()["error"] == "malformed request" and "NUL" in response.json()["hint"]


@pytest.mark.parametrize("body", ['{"gpu": "A100\\u0000", "model": "m"}', '{"gpu": "A100\\U0000", "model": "m"}',
                                  '{"gpu": "A100\x00", "model": "m"}'])
def test_a_nul_in_a_json_body_is_a_400(body):
    response = Client().post("/api/advisor/recommend", body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "malformed request"


def test_a_nul_in_a_url_encoded_form_is_a_400():
    form = "application/x-www-form-urlencoded"
    assert Client().post("/login/", "username=owner%00&password=x", content_type=form).status_code == 400
    assert Client().post("/digest/", "email=a%00%40example.org&min_score=0", content_type=form).status_code == 400


def test_a_nul_in_a_multipart_form_is_refused_by_the_form_itself():
    # Multipart bodies are left to the views (uploads set their own handlers); Django's form fields
    # refuse NUL characters, so the page answers with the form's error, not a server error.
    client = Client()
    login = client.post("/login/", {"username": "owner\x00", "password": "x"})
    assert login.status_code == 200 and "_auth_user_id" not in client.session
    assert Client().post("/digest/", {"email": "a\x00@example.org", "min_score": "0"}).status_code == 400


def test_requests_without_nul_are_untouched():
    assert Client().get("/papers/?q=kv").status_code == 200
    assert Client().get("/api/papers/?q=kv").status_code == 200

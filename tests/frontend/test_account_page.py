"""The account page: the digest subscription at a glance (managed on /digest/) and the API token."""
import pytest
from rest_framework.authtoken.models import Token

from tests.frontend.data import password

pytestmark = pytest.mark.django_db


def test_visitors_are_sent_to_log_in(client, web):
    response = client.get("/account/")
    assert response.status_code == 302 and response["Location"] == "/login/?next=/account/"


def test_a_user_who_is_not_staff_can_log_in_on_the_site(client, web):
    response = client.post("/login/", {"username": "editor", "password": password("editor"), "next": "/review/"})
    assert response.status_code == 302 and response["Location"] == "/review/"


def test_the_owner_sees_their_subscription_and_a_link_to_manage_it(client, web):
    client.login(username="owner", password=password("owner"))
    html = client.get("/account/").content.decode()
    assert "owner@example.org" in html and "active" in html and "kv-cache" in html
    assert 'href="/digest/"' in html


def test_creating_a_token_shows_it_and_replacing_it_revokes_the_old_one(client, web):
    client.login(username="outsider", password=password("outsider"))
    client.post("/account/token/")
    first = Token.objects.get(user=web.users["outsider"]).key
    assert first in client.get("/account/").content.decode()
    client.post("/account/token/")
    assert not Token.objects.filter(key=first).exists()

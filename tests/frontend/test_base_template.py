"""The base layout every page extends: navigation, skip link, login link, static assets."""
import pytest


@pytest.mark.django_db
def test_the_layout_has_a_skip_link_a_labelled_nav_and_a_login_link_for_visitors(client):
    html = client.get("/login/").content.decode()
    assert 'href="#main"' in html
    assert '<nav class="site-nav" aria-label="Main">' in html
    assert "frontend/site.css" in html
    assert "/login/?next=" in html


@pytest.mark.django_db
def test_a_logged_in_user_sees_their_name_and_a_logout_button(client, django_user_model):
    user = django_user_model.objects.create_user("owner", password="pw-owner-123")
    client.force_login(user)
    html = client.get("/login/").content.decode()
    assert "owner" in html
    assert 'action="/logout/"' in html

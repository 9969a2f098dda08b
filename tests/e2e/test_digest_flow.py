"""In a real browser: subscribe to the digest, open the emailed confirmation link, press Confirm, see it confirmed."""
import re
from urllib.parse import urlparse

import pytest
from django.core import mail
from playwright.sync_api import expect

from papers.models.digest import Subscription
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_subscribing_then_opening_the_confirmation_link_activates_the_digest(page, web_live):
    page.goto("/")
    page.get_by_role("link", name="Digest").click()
    page.get_by_label("Email address").fill("reader@example.org")
    screenshot(page, "digest-subscribe")
    page.get_by_role("button", name="Subscribe").click()
    expect(page.get_by_role("heading", name="Check your inbox")).to_be_visible()
    assert Subscription.objects.get(email="reader@example.org").status == "pending"

    body = "\n".join(m.body for m in mail.outbox if "reader@example.org" in m.to)
    link = re.search(r"https?://\S+/digest/confirm/\S+/", body)
    assert link, f"no confirmation link in the email:\n{body}"
    page.goto(urlparse(link.group(0)).path)
    assert Subscription.objects.get(email="reader@example.org").status == "pending"  # opening the link is not enough
    page.get_by_role("button", name="Confirm subscription").click()
    expect(page.get_by_role("heading", name="Subscription confirmed")).to_be_visible()
    screenshot(page, "digest-confirmed")
    assert Subscription.objects.get(email="reader@example.org").status == "active"

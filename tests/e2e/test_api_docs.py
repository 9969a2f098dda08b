"""In a real browser: the API documentation renders from locally served Swagger UI assets (no CDN)."""
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_the_swagger_page_lists_the_operations_using_only_local_assets(page, web_live, live_server):
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server.url) else None)
    page.goto("/api/docs/")
    page.locator(".opblock").first.wait_for()
    assert page.locator(".opblock").count() >= 20
    expect(page.get_by_text("/api/papers/", exact=True).first).to_be_visible()
    screenshot(page, "api-docs", full_page=False)
    assert not [u for u in outside if not u.startswith("data:")], f"requests left the server: {outside}"

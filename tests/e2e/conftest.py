"""Browser fixtures: real Chromium (/usr/bin/chromium, headless) driven by Playwright against the
pytest-django live server. Screenshots go to artifacts/screenshots/ (gitignored) for a person to look at.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import ROOT, require
from tests.frontend.data import WebData, make_web_data, password

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make around it
# are ordinary blocking calls, so Django's guard against ORM use inside async code does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# expect() waits 5 s by default, apart from the context's timeout below: as generous as that one, since a
# form's answer may wait on the embedding model's first load on a busy 2-core box.
expect.set_options(timeout=60000)


@pytest.fixture(scope="session")
def browser():
    require(CHROMIUM.exists(), "Chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    # Generous: first use of the embedding model (search, advisor evidence) loads it, on a busy 2-core box.
    context.set_default_timeout(60000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def web_live(transactional_db, live_server) -> WebData:
    return make_web_data()


@pytest.fixture
def web_live_indexed(transactional_db, live_server) -> WebData:
    return make_web_data(index=True)


def screenshot(page, name: str, full_page: bool = True) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def log_in(page, username: str) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password(username))
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()
    expect(page.get_by_text(username).first).to_be_visible()

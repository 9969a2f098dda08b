"""In a real browser: an editor searches, opens the paper from a result, and verifies a fact there."""
import pytest
from playwright.sync_api import expect

from ontology.models import Fact
from tests.e2e.conftest import log_in, screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_search_then_open_the_paper_then_verify_a_fact(page, web_live_indexed):
    fact = web_live_indexed.facts["block_size"]
    log_in(page, "editor")
    page.get_by_role("link", name="Search").click()
    page.wait_for_url("**/search/")
    page.get_by_role("searchbox", name="Search facts, sections and papers").fill("KV cache block size")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/search/?q=*")
    assert page.get_by_role("status").inner_text().startswith(tuple("123456789"))
    screenshot(page, "search-results")

    page.locator(f'a[href="/papers/2309.06180/#fact-{fact.id}"]').first.click()
    page.wait_for_url("**/papers/2309.06180/**")
    row = page.locator(f"#fact-{fact.id}")
    assert "we set the block size to 16 tokens" in row.inner_text()
    expect(page.get_by_role("heading", name="Scorecard")).to_be_visible()
    screenshot(page, "paper-page")

    row.get_by_role("button", name=f"Verify fact {fact.id}").click()
    page.wait_for_load_state()
    expect(page.get_by_role("status").filter(has_text=f"Fact #{fact.id} verified.")).to_be_visible()
    assert "verified" in page.locator(f"#fact-{fact.id}").inner_text()
    screenshot(page, "paper-page-verified")
    assert Fact.objects.get(id=fact.id).status == "verified"


def test_extracted_text_never_runs_as_script_in_the_browser(page, web_live):
    page.goto("/papers/2309.06180/")
    assert page.evaluate("window.__pwned === undefined")
    assert "<script>window.__pwned = 1</script>" in page.locator("body").inner_text()


def test_the_keyboard_reaches_the_skip_link_first_and_it_jumps_to_the_content(page, web_live):
    page.goto("/")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused.strip() == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    screenshot(page, "dashboard")

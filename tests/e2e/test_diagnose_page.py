"""In a real browser at phone width: diagnose answers a symptom with a technique, its flag and a quote."""
from __future__ import annotations

import pytest

from ontology.services import link_facts
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e]


def test_diagnose_answers_a_symptom_on_a_phone_screen(browser, live_server, web_live_indexed):
    link_facts(list(web_live_indexed.facts.values()))
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto("/diagnose/")
        page.get_by_label("Symptom or error message").fill("long prompts make decode latency spike")
        page.get_by_role("button", name="Diagnose").click()
        page.wait_for_load_state()
        finding = page.locator("li.finding").first
        assert "Chunked prefill" in finding.inner_text() and "--enable-chunked-prefill" in finding.inner_text()
        assert "arXiv:2403.02310" in finding.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert screenshot(page, "diagnose-phone").stat().st_size > 5000
    finally:
        context.close()

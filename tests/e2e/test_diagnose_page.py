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


def test_a_pasted_multi_line_traceback_keeps_its_lines_and_is_answered_fix_first(page, web_live):
    traceback = ("Traceback (most recent call last):\n"
                 '  File "/usr/lib/python3/site-packages/vllm/worker/worker.py", line 1, in determine_num_blocks\n'
                 "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can "
                 "be stored in KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing "
                 "`max_model_len` when initializing the engine.")
    page.goto("/diagnose/")
    page.get_by_label("Symptom or error message").fill(traceback)
    page.get_by_role("button", name="Diagnose").click()
    page.wait_for_load_state()
    # A one-line input would have dropped the line breaks and glued "determine_num_blocks" to "ValueError".
    assert page.get_by_label("Symptom or error message").input_value() == traceback
    assert "vLLM: lower --max-model-len 3664" in page.locator("li.finding").first.inner_text()

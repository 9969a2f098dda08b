"""In a real browser: fill the advisor form, get a result with its memory chart and a copyable command."""
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_the_advisor_form_leads_to_a_result_with_its_chart(page, live_server, web_live):
    page.goto("/advisor/")
    page.get_by_label("GPU", exact=True).fill("A100-SXM4-40GB")
    page.get_by_label("CUDA version the driver supports").fill("12.1")
    page.get_by_label("Model", exact=True).fill("meta-llama/Llama-3.1-8B-Instruct")
    page.get_by_label("Concurrent requests").fill("16")
    page.get_by_label("p95 end-to-end latency (ms)").fill("5000")
    screenshot(page, "advisor-form")
    page.get_by_role("button", name="Recommend").click()
    page.wait_for_url("**/advisor/result/**")
    expect(page.get_by_role("heading", name="Recommendation")).to_be_visible()
    chart = page.locator("figure.chart svg[role=img]").first
    expect(chart).to_be_visible()
    segments = page.locator("rect.mem-segment")
    assert segments.count() >= 2
    assert float(segments.first.get_attribute("width")) > 0
    command = page.locator("pre.command").first.inner_text().strip()
    assert command
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.get_by_role("button", name="Copy the command").first.click()
    # the page writes the clipboard asynchronously: poll for up to 5 s before comparing
    for _ in range(50):
        if page.evaluate("navigator.clipboard.readText()") == command:
            break
        page.wait_for_timeout(100)
    assert page.evaluate("navigator.clipboard.readText()") == command
    screenshot(page, "advisor-result", full_page=False)
    page.locator("figure.chart").first.scroll_into_view_if_needed()
    screenshot(page, "advisor-result-chart", full_page=False)


PHONE_PAGES = ["/", "/papers/", "/papers/2309.06180/", "/search/?q=block+size", "/review/", "/parameters/chunk_size/",
               "/entities/vllm/", "/advisor/",
               "/advisor/result/?gpu=L4&gpu_count=1&model=meta-llama%2FLlama-3.1-8B-Instruct&concurrency=8"]


def test_every_page_fits_a_phone_screen_without_sideways_scrolling(browser, live_server, web_live):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844},
                                  device_scale_factor=2, is_mobile=True)
    page = context.new_page()
    too_wide = {}
    for url in PHONE_PAGES:
        page.goto(url)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            too_wide[url] = width
    page.goto(PHONE_PAGES[-1])
    screenshot(page, "advisor-result-phone", full_page=False)
    page.goto("/papers/2309.06180/")
    page.locator("#facts-h").scroll_into_view_if_needed()
    screenshot(page, "paper-facts-phone", full_page=False)
    context.close()
    assert not too_wide, f"pages that scroll sideways on a 390 px phone: {too_wide}"

"""In a real browser: the dashboard's value matrix draws one point per scored paper, fits a phone
screen, and one click on a point opens that paper's evidence for both axes."""
from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from papers.models import Paper, Score
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e]

PHONE = {"width": 390, "height": 844}


def _scored(arxiv_id: str, title: str, value: float, cost: float, quadrant: str, reasons: dict) -> Paper:
    paper = Paper.objects.create(arxiv_id=arxiv_id, title=title, status="extracted")
    Score.objects.create(paper=paper, total=5.0, code_availability=1, experimental_realism=2,
                         parameter_transparency=1, community_feedback=1, tier="to_verify",
                         production_value=value, implementation_cost=cost, quadrant=quadrant, value_matrix=reasons,
                         fingerprint=f"fp-{arxiv_id}", scored_at=timezone.now())
    return paper


@pytest.fixture
def scored_papers(transactional_db):
    return [
        _scored("2403.02310", "Chunked prefills for stall-free serving", 4.0, 1.0, "quick_win",
                {"value": ["evaluated on real traces", "real hardware"], "cost": ["no CI"]}),
        _scored("2401.09670", "Disaggregated prefill and decode", 4.0, 1.0, "quick_win",
                {"value": ["end-to-end serving metrics"], "cost": ["no CI"]}),
        _scored("2312.11514", "Inference from flash memory", 1.0, 4.0, "thankless",
                {"value": ["real hardware"], "cost": ["no official code: must be reimplemented", "no CI"]}),
    ]


def test_the_value_matrix_fits_a_phone_and_a_point_opens_the_papers_axis_evidence(browser, live_server, scored_papers):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    try:
        page.goto("/")
        chart = page.locator("svg.value-matrix")
        chart.scroll_into_view_if_needed()
        assert chart.locator("a.point").count() == 3
        box = chart.bounding_box()
        assert box["width"] <= PHONE["width"] and box["width"] >= 0.75 * PHONE["width"] - 40
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        # the two papers with the same (cost, value) are set apart, not drawn on top of each other
        centres = chart.locator("a.point circle").evaluate_all(
            "cs => cs.map(c => [c.getAttribute('cx'), c.getAttribute('cy')].join(','))")
        assert len(set(centres)) == 3
        quick = chart.locator("a.point.q-quick_win circle").first.bounding_box()
        zone = chart.locator("rect.quick-win").bounding_box()
        assert zone["x"] <= quick["x"] + quick["width"] / 2 <= zone["x"] + zone["width"]
        assert zone["y"] <= quick["y"] + quick["height"] / 2 <= zone["y"] + zone["height"]
        shot = screenshot(page, "dashboard-value-matrix-phone", full_page=False)
        assert shot.stat().st_size > 5000
        chart.locator("a.point.q-thankless").click()
        page.wait_for_url("**/papers/2312.11514/#value-matrix")
        evidence = page.locator("#value-matrix")
        expect(evidence).to_be_visible()
        assert "no official code: must be reimplemented" in evidence.inner_text()
        assert "real hardware" in evidence.inner_text()
    finally:
        context.close()


def test_without_scores_the_dashboard_says_so_instead_of_an_empty_chart(page, transactional_db):
    page.goto("/")
    assert page.locator("svg.value-matrix").count() == 0
    expect(page.get_by_text("No paper has been scored yet.").first).to_be_visible()

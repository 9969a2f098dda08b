"""In a real browser, on every page: each form control has a label, each button a name, each chart a
text alternative, one h1, and headings that do not skip levels — what a screen reader needs."""
import pytest

from tests.e2e.conftest import log_in
from tests.e2e.test_advisor_flow import PHONE_PAGES

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AUDIT = """() => {
  const problems = [];
  const visible = el => el.offsetParent !== null || el.getClientRects().length > 0;
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (['hidden', 'submit', 'button'].includes(el.type)) continue;
    if (!el.labels.length && !el.getAttribute('aria-label')) problems.push('unlabelled ' + el.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll('button, a[href]')) {
    if (visible(el) && !(el.textContent.trim() || el.getAttribute('aria-label'))) problems.push('nameless ' + el.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll('svg')) {
    if (el.getAttribute('role') !== 'img' || !(el.getAttribute('aria-label') || el.querySelector('title')))
      problems.push('chart without text alternative');
  }
  if (document.querySelectorAll('h1').length !== 1) problems.push(document.querySelectorAll('h1').length + ' h1 elements');
  let last = 1;
  for (const h of document.querySelectorAll('main h1, main h2, main h3, main h4')) {
    const level = Number(h.tagName[1]);
    if (level > last + 1) problems.push('heading jumps to ' + h.tagName + ': ' + h.textContent.trim().slice(0, 40));
    last = level;
  }
  if (!document.documentElement.lang) problems.push('no lang on <html>');
  return problems;
}"""


def test_every_page_passes_the_screen_reader_audit(page, web_live):
    log_in(page, "editor")
    fact_id = web_live.facts["block_size"].id
    found = {}
    for url in [*PHONE_PAGES, f"/facts/{fact_id}/", "/account/", "/digest/"]:
        page.goto(url)
        problems = page.evaluate(AUDIT)
        if problems:
            found[url] = problems
    assert not found, found

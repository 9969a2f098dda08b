"""In a real browser, on every page: each form control has a label, each button a name, each chart a
text alternative, one h1, headings that do not skip levels (what a screen reader needs), and text
with WCAG AA contrast."""
import pytest

from tests.e2e.conftest import log_in
from tests.e2e.test_advisor_flow import PHONE_PAGES

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AUDIT = r"""() => {
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
  // WCAG AA contrast of visible text against the first opaque background behind it.
  const rgb = c => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || c[3] > 0.5) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  for (const el of document.querySelectorAll('body *')) {
    const text = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!text || !visible(el)) continue;
    const style = getComputedStyle(el);
    const [a, b] = [lum(rgb(style.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) problems.push(`contrast ${ratio.toFixed(2)} on "${el.textContent.trim().slice(0, 30)}"`);
  }
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

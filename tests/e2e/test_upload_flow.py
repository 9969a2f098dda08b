"""In a real browser: an editor uploads a PDF from the papers list and lands on its stored page."""
import pytest

from papers.models import Paper
from tests.e2e.conftest import log_in, screenshot
from tests.papers.pdfs import SERVING_TEXT, text_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_an_editor_uploads_a_pdf_and_sees_it_stored(page, web_live, tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    pdf = text_pdf(tmp_path / "2401.00031.pdf", SERVING_TEXT, title="Sys: fast serving",
                   stamp="arXiv:2401.00031v1  [cs.DC]  1 Jan 2024")
    log_in(page, "editor")
    page.goto("/papers/")
    page.get_by_role("link", name="Upload a PDF").click()
    page.wait_for_url("**/upload/")
    page.get_by_label("PDF file").set_input_files(str(pdf))
    screenshot(page, "upload-form")
    page.get_by_role("button", name="Upload").click()
    page.wait_for_url("**/papers/2401.00031/")
    assert "stored as 2401.00031 and searchable" in page.locator("body").inner_text()
    screenshot(page, "upload-stored")
    assert Paper.objects.get(arxiv_id="2401.00031").pages.count() == 1

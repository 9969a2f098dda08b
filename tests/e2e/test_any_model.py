"""In a real browser: a model outside the catalog is looked up on a (loopback) Hugging Face Hub, and with no
network at all a model folder's config.json path, or the pasted config.json, sizes it."""
import json

import pytest
from playwright.sync_api import expect

from tests.advisor.hub_replay import FIXTURES, replay_hub
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens on the discard port: the Hub is unreachable


def _ask(page, model: str, config: str = "") -> None:
    page.goto("/advisor/")
    page.get_by_label("GPU", exact=True).fill("NVIDIA L4")
    page.get_by_label("Model", exact=True).fill(model)
    if config:
        page.get_by_label("Model config.json (optional)").fill(config)
    page.get_by_role("button", name="Recommend").click()
    page.wait_for_load_state()


def test_an_unknown_model_in_the_advisor_form_is_looked_up_on_the_hub(page, live_server, web_live, monkeypatch):
    with replay_hub() as (url, state):
        monkeypatch.setenv("HF_ENDPOINT", url)
        _ask(page, "Qwen/Qwen3-4B")
        page.wait_for_url("**/advisor/result/**")
        expect(page.get_by_role("heading", name="Recommendation")).to_be_visible()
        assert "read from the Hugging Face Hub" in page.content()
        assert state["config_downloads"] == [("Qwen/Qwen3-4B", "rev-qwen3-4b-a")]
    screenshot(page, "advisor-hub-model", full_page=False)


def test_with_no_network_a_config_json_path_or_the_pasted_file_sizes_the_model(page, live_server, web_live, monkeypatch,
                                                                              settings, tmp_path):
    monkeypatch.setenv("HF_ENDPOINT", CLOSED_PORT)
    folder = tmp_path / "models" / "qwen3-4b"
    folder.mkdir(parents=True)
    config = json.dumps(FIXTURES["repos"]["Qwen/Qwen3-4B"]["config"], indent=2)
    (folder / "config.json").write_text(config)
    settings.ADVISOR_MODEL_DIRS = [str(tmp_path / "models")]

    _ask(page, "acme/private-4b")  # unknown, and the Hub cannot be reached: the error names the routes
    error = page.get_by_role("alert").inner_text()
    assert "could not be reached" in error and "Model config.json" in error and "local model folder" in error
    assert "model_config" not in error, "the page names its fields by their labels, not by the API's keys"

    _ask(page, str(folder / "config.json"))
    expect(page.get_by_role("heading", name="Recommendation")).to_be_visible()
    assert str(folder / "config.json") in page.locator("pre.command").first.inner_text()

    _ask(page, "acme/private-4b", config)
    expect(page.get_by_role("heading", name="Recommendation")).to_be_visible()
    assert "acme/private-4b" in page.locator("pre.command").first.inner_text()
    screenshot(page, "advisor-pasted-config", full_page=False)

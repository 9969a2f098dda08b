"""Model specs from the Hugging Face Hub with the real huggingface_hub client, against a loopback server
replaying Hub responses (tests/advisor/data/hub/hub_fixtures.json says where each body was read):
a public repo, the database cache and its refresh on a new revision, a gated repo, a missing one, offline."""
from __future__ import annotations

import pytest

from advisor import hub
from advisor.model_specs import catalog_model, spec_from_config
from advisor.models import HubModel
from advisor.planner import enumerate_options
from advisor.validation import AdvisorInputError, parse_request
from tests.advisor.hub_replay import replay_hub

pytestmark = pytest.mark.django_db


@pytest.fixture
def hub_server(monkeypatch):
    with replay_hub() as (url, state):
        monkeypatch.setenv("HF_ENDPOINT", url)
        yield state


def test_a_public_model_outside_the_catalog_is_sized_from_its_hub_config(hub_server):
    assert catalog_model("Qwen/Qwen3-4B") is None
    req = parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-4B"})
    m = req.model
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.vocab, m.max_context) == (36, 2560, 32, 8, 128, 151936, 40960)
    assert m.tied_embeddings and m.dtype == "bfloat16"
    assert "127.0.0.1" in m.source and m.source.endswith("/resolve/rev-qwen3-4b-a/config.json")
    assert any("read from the Hugging Face Hub" in w for w in req.warnings)
    assert any("computed from config.json" in w for w in req.warnings)  # no safetensors metadata in this reply
    plan = enumerate_options(req)  # sized and planned like any catalog model
    assert plan.options and all(o.plan.weights_gib > 7 for o in plan.options if o.quant.method is None)


def test_the_safetensors_count_is_the_parameter_count_and_agrees_with_the_config(hub_server):
    card = hub.model_card("Qwen/Qwen3-8B")
    assert card.parameters == {"BF16": 8190735360}
    spec, notes = spec_from_config(card.repo_id, card.config, card.parameters, card.source)
    assert spec.params_total == 8190735360 and not any("computed" in n for n in notes)
    assert spec.params_total == pytest.approx(catalog_model("Qwen/Qwen3-8B").params_total, rel=1e-4)  # the catalog omits norms


def test_the_spec_is_cached_with_its_revision_and_refreshed_when_the_revision_changes(hub_server):
    parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-14B"})
    row = HubModel.objects.get(repo_id="Qwen/Qwen3-14B")
    assert row.revision == "rev-qwen3-14b-a" and row.config["num_hidden_layers"] == 40
    parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-14B"})
    assert hub_server["config_downloads"] == [("Qwen/Qwen3-14B", "rev-qwen3-14b-a")]  # the cache answered
    hub_server["sha"]["Qwen/Qwen3-14B"] = "rev-qwen3-14b-b"
    parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-14B"})
    assert hub_server["config_downloads"][-1] == ("Qwen/Qwen3-14B", "rev-qwen3-14b-b")
    assert HubModel.objects.get(repo_id="Qwen/Qwen3-14B").revision == "rev-qwen3-14b-b"


def test_a_gated_repo_says_to_set_hf_token_and_the_token_is_sent(hub_server, monkeypatch):
    with pytest.raises(AdvisorInputError) as err:
        parse_request({"gpu": "H100 SXM", "model": "meta-llama/Llama-Guard-4-12B"})
    assert "gated" in err.value.error and "HF_TOKEN" in err.value.hint and "closest known ids" in err.value.hint
    monkeypatch.setenv("HF_TOKEN", "hf_replay_token")
    with pytest.raises(AdvisorInputError):
        parse_request({"gpu": "H100 SXM", "model": "meta-llama/Llama-Guard-4-12B"})
    assert hub_server["auth"][-1] == "Bearer hf_replay_token"


def test_a_missing_repo_names_the_closest_known_ids(hub_server):
    with pytest.raises(AdvisorInputError) as err:
        parse_request({"gpu": "NVIDIA L4", "model": "nobody/no-such-model-7b"})
    assert "has no model nobody/no-such-model-7b" in err.value.error
    assert err.value.hint.startswith("closest known ids: ")


def test_offline_the_catalog_still_answers_and_an_unknown_id_is_a_clear_error():
    assert parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-8B"}).model.layers == 36  # catalog, no Hub
    with pytest.raises(AdvisorInputError) as err:
        parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-4B"})
    assert "could not be reached" in err.value.error and "HF_ENDPOINT" in err.value.hint
    assert "Qwen/Qwen3-" in err.value.hint  # the closest catalog ids


def test_offline_a_model_read_before_is_answered_from_the_database(hub_server, monkeypatch):
    parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-14B"})
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-14B"}).model.layers == 40

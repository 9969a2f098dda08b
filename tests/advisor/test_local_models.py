"""Any model, online or offline: a config.json in the request, a local model folder (the CLI reads any path,
the server only below ADVISOR_MODEL_DIRS), aiconfigurator-core's bundled configs when the Hub is unreachable,
and an unreachable-Hub error that names these routes. The Hub is a closed loopback port here (conftest)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIRequestFactory

from advisor.api import RecommendView
from advisor.model_specs import catalog_model
from advisor.planner import enumerate_options
from advisor.validation import AdvisorInputError, parse_request
from tests.advisor.hub_replay import FIXTURES

QWEN3_4B = FIXTURES["repos"]["Qwen/Qwen3-4B"]["config"]  # its real config.json (source in the fixture file)
pytestmark = pytest.mark.django_db


def _shape(spec):
    return (spec.layers, spec.hidden, spec.heads, spec.kv_heads, spec.head_dim, spec.vocab, spec.max_context)


@pytest.fixture
def model_dir(tmp_path) -> Path:
    folder = tmp_path / "models" / "qwen3-4b"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(QWEN3_4B))
    return folder


def test_a_config_json_in_the_request_sizes_a_model_no_catalog_or_hub_knows():
    req = parse_request({"gpu": "NVIDIA L4", "model": "acme/private-4b", "model_config": QWEN3_4B})
    assert _shape(req.model) == (36, 2560, 32, 8, 128, 151936, 40960)
    assert req.model.source == '"model_config" in the request'
    assert enumerate_options(req).options  # planned like any other model


def test_a_request_config_that_is_not_a_model_config_is_a_clear_error():
    with pytest.raises(AdvisorInputError) as err:
        parse_request({"gpu": "NVIDIA L4", "model": "acme/private-4b", "model_config": {"hidden_size": 10}})
    assert "lacks what sizing needs" in err.value.error


def test_the_cli_reads_a_local_model_folder_and_its_config_json_path(model_dir):
    for given in (str(model_dir), str(model_dir / "config.json")):
        out = io.StringIO()
        call_command("advise", "--gpu", "NVIDIA L4", "--model", given, "--engine", "vllm", stdout=out)
        answer = json.loads(out.getvalue())
        assert answer["input"]["model"] == given and answer["feasible"]
        assert given in answer["recommendations"][0]["command"]


def test_the_cli_takes_a_config_file_for_a_named_model(model_dir):
    out = io.StringIO()
    call_command("advise", "--gpu", "NVIDIA L4", "--model", "acme/private-4b",
                 "--model-config", str(model_dir / "config.json"), stdout=out)
    assert json.loads(out.getvalue())["input"]["model"] == "acme/private-4b"


def test_the_api_reads_paths_only_below_advisor_model_dirs_and_takes_a_pasted_config(model_dir, settings, tmp_path):
    view = RecommendView.as_view()
    body = {"gpu": "NVIDIA L4", "model": str(model_dir)}
    settings.ADVISOR_MODEL_DIRS = []
    refused = view(APIRequestFactory().post("/api/advisor/recommend", body, format="json"))
    assert refused.status_code == 400 and "ADVISOR_MODEL_DIRS" in refused.data["hint"]
    settings.ADVISOR_MODEL_DIRS = [str(tmp_path / "models")]
    answered = view(APIRequestFactory().post("/api/advisor/recommend", body, format="json"))
    assert answered.status_code == 200 and answered.data["input"]["model"] == str(model_dir)
    outside = view(APIRequestFactory().post("/api/advisor/recommend", {**body, "model": "/etc"}, format="json"))
    assert outside.status_code == 400 and "is not below" in outside.data["error"]
    pasted = view(APIRequestFactory().post("/api/advisor/recommend", {"gpu": "NVIDIA L4", "model": "acme/private-4b",
                                                                      "model_config": QWEN3_4B}, format="json"))
    assert pasted.status_code == 200 and pasted.data["input"]["model"] == "acme/private-4b"


def test_a_symlink_out_of_an_allowed_folder_is_refused(model_dir, settings, tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "escape").symlink_to(model_dir)
    settings.ADVISOR_MODEL_DIRS = [str(allowed)]
    with pytest.raises(AdvisorInputError) as err:
        parse_request({"gpu": "NVIDIA L4", "model": str(allowed / "escape")})
    assert "is not below" in err.value.error


def test_a_path_that_is_not_a_model_folder_says_so(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0")
    for given, error in ((str(tmp_path), "cannot read"), (str(tmp_path / "weights.bin"), "neither a model folder")):
        with pytest.raises(AdvisorInputError) as err:
            parse_request({"gpu": "NVIDIA L4", "model": given}, any_path=True)
        assert error in err.value.error


def test_offline_aiconfigurator_cores_bundled_config_answers_for_a_model_the_catalog_lacks():
    assert catalog_model("Qwen/Qwen3-1.7B") is None
    req = parse_request({"gpu": "NVIDIA L4", "model": "Qwen/Qwen3-1.7B"})
    assert _shape(req.model)[:4] == (28, 2048, 16, 8)  # Qwen3-1.7B's config.json
    assert "aiconfigurator-core" in req.model.source and "Qwen--Qwen3-1.7B_config.json" in req.model.source
    assert any("could not be reached" in w and "answered" in w for w in req.warnings)


def test_offline_an_unknown_model_names_every_route_that_works_without_the_hub():
    with pytest.raises(AdvisorInputError) as err:
        parse_request({"gpu": "NVIDIA L4", "model": "acme/private-4b"})
    assert "could not be reached" in err.value.error
    assert all(route in err.value.hint for route in ("HF_ENDPOINT", "local model folder", '"model_config"'))

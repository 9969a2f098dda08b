"""The two ways in: `manage.py advise` (exit 2 on bad input) and POST /api/advisor/recommend (400)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import resolve
from rest_framework.test import APIRequestFactory

from advisor.api import RecommendView

REQUEST = {"gpu": "Tesla T4", "gpu_count": 1, "cuda": "11.8", "model": "meta-llama/Llama-2-7b-chat-hf",
           "engine": "vllm", "engine_version": "0.2.2"}


def advise(*args: str) -> tuple[dict, int]:
    out = io.StringIO()
    code = 0
    try:
        call_command("advise", *args, stdout=out)
    except SystemExit as exc:
        code = int(exc.code)
    return json.loads(out.getvalue()), code


def test_the_command_reads_a_request_file_and_prints_the_answer(tmp_path):
    path = tmp_path / "req.json"
    path.write_text(json.dumps(REQUEST))
    answer, code = advise("--request", str(path))
    assert code == 0 and answer["feasible"] is True
    assert all("cu118" in r["install"] for r in answer["recommendations"])


def test_the_command_takes_the_request_as_flags():
    answer, code = advise("--gpu", "NVIDIA L4", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "vllm",
                          "--concurrency", "4", "--p95-latency-ms", "60000", "--flag", "max_model_len=8192")
    assert code == 0
    assert answer["input"]["workload"]["concurrency"] == 4
    assert answer["recommendations"][0]["flags"]["max_model_len"] == 8192


@pytest.mark.parametrize("args, error", [
    (("--gpu", "Banana GPU 9000", "--model", "meta-llama/Llama-2-7b-hf"), "unknown GPU"),
    (("--gpu", "T4", "--model", "meta-llama/Llama-2-7b-hf", "--flag", "max_model_len"), "KEY=VALUE"),
    (("--model", "meta-llama/Llama-2-7b-hf"), "'gpu' is required"),
])
def test_bad_input_prints_error_and_hint_and_exits_2(args, error):
    answer, code = advise(*args)
    assert code == 2
    assert error in answer["error"] and answer["hint"]


def test_an_unreadable_or_invalid_request_file_exits_2(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    answer, code = advise("--request", str(broken))
    assert code == 2 and "not valid JSON" in answer["error"]
    answer, code = advise("--request", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in answer["error"]


def _post(body, content_type="application/json"):
    request = APIRequestFactory().post("/api/advisor/recommend", body if isinstance(body, str) else json.dumps(body),
                                       content_type=content_type)
    return RecommendView.as_view()(request)


@pytest.mark.django_db  # the API's rate limits count in the database
def test_the_api_answers_a_valid_request():
    response = _post(REQUEST)
    assert response.status_code == 200
    assert response.data["recommendations"][0]["engine"] == "vllm"


@pytest.mark.django_db
def test_the_api_answers_400_with_error_and_hint_for_bad_input():
    response = _post({"gpu": "Banana GPU 9000", "model": "meta-llama/Llama-2-7b-hf"})
    assert response.status_code == 400
    assert "unknown GPU" in response.data["error"] and "closest known GPUs" in response.data["hint"]
    assert _post("[1, 2]").status_code == 400


def test_the_api_is_routed_under_api_advisor():
    assert resolve("/api/advisor/recommend").func.view_class is RecommendView


@pytest.mark.parametrize("text, error", [
    ('{"gpu": "T4", "model": "meta-llama/Llama-2-7b-hf", "sla": {"p95_latency_ms": NaN}}', "finite"),
    ('{"gpu": "T4", "model": "meta-llama/Llama-2-7b-hf", "sla": {"p95_ttft_ms": Infinity}}', "finite"),
    ('{"gpu": "T4", "model": "meta-llama/Llama-2-7b-hf", "flags": {"max_model_len": 1' + "0" * 400 + "}}", "beyond"),
    ('{"gpu": "T4", "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm", "engine_version": "' + "1" * 5000 + '"}', "longer than"),
    ("[" * 100_000 + "]" * 100_000, "nests too deeply"),
])
def test_hostile_request_files_print_valid_json_with_error_and_hint_and_exit_2(tmp_path, text, error):
    path = tmp_path / "req.json"
    path.write_text(text)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("advise", "--request", str(path), stdout=out)
    assert exc.value.code == 2
    answer = json.loads(out.getvalue(), parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))
    assert error in answer["error"] and answer["hint"]


def test_the_command_flags_are_the_request_models_fields():
    answer, code = advise("--gpu", "NVIDIA L4", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "vllm",
                          "--prompt-tokens", "2048", "--shared-prefix-tokens", "1024", "--request-rate", "2.5")
    assert code == 0
    assert answer["input"]["workload"]["shared_prefix_tokens"] == 1024
    assert answer["input"]["workload"]["request_rate"] == 2.5


def test_a_request_file_over_the_body_limit_is_an_input_error_with_exit_2(tmp_path, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({**REQUEST, "pad": "x" * 4096}))
    answer, code = advise("--request", str(path))
    assert code == 2 and "longer than 2,048 characters" in answer["error"] and answer["hint"]

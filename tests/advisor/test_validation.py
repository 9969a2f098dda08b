"""Input validation: every mistake gets an error a person can act on, with a hint."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.profiles import profile
from advisor.services import recommend
from advisor.validation import AdvisorInputError, parse_request

BASE = {"gpu": "A100-SXM4-40GB", "model": "meta-llama/Llama-3.1-8B-Instruct"}


@pytest.mark.parametrize("raw, error, hint", [
    ([], "JSON object", "A100"),
    ({"model": "x"}, "'gpu' is required", "nvidia-smi"),
    ({"gpu": "A100"}, "'model' is required", "Hugging Face"),
    ({**BASE, "gpu": "Banana GPU 9000"}, "unknown GPU 'Banana GPU 9000'", "closest known GPUs"),
    ({**BASE, "model": "org/mystery"}, "not in the catalog", "closest known ids"),
    ({**BASE, "gpu_count": 0}, "gpu_count", "e.g. 1"),
    ({**BASE, "gpu_count": "two"}, "gpu_count", "e.g. 1"),
    ({**BASE, "gpu_count": 10**9}, "beyond what the advisor plans", "e.g. 1"),
    ({**BASE, "workload": {"concurrency": 10**6}}, "beyond what the advisor plans", "16"),
    ({**BASE, "cuda": "twelve"}, "not a CUDA version", "nvidia-smi"),
    ({**BASE, "engine": "fastllm"}, "unknown engine", "vllm"),
    ({**BASE, "engine_version": "0.6.3"}, "without 'engine'", "engine"),
    ({**BASE, "engine": "vllm", "engine_version": "latest"}, "not a version number", "0.6.3"),
    ({**BASE, "workload": {"prompt_tokens": -5}}, "workload.prompt_tokens", "1024"),
    ({**BASE, "workload": {"qps": 3}}, "unknown workload field", "concurrency"),
    ({**BASE, "sla": {"p95_latency_ms": "fast"}}, "sla.p95_latency_ms", "500"),
    ({**BASE, "sla": {"p99_ms": 3}}, "unknown sla field", "p95_ttft_ms"),
    ({**BASE, "flags": {"gpu_memory_utilization": 1.5}}, "fraction", "0.9"),
    ({**BASE, "flags": {"dtype": "int3"}}, "not a dtype", "float16"),
    ({**BASE, "flags": {"tensor_parallel_size": 4}}, "needs more than the 1 GPU", "gpu_count"),
    ({**BASE, "gpus": 2}, "unknown field(s): gpus", "gpu_count"),
])
def test_bad_input_is_rejected_with_an_actionable_hint(raw, error, hint):
    with pytest.raises(AdvisorInputError) as caught:
        parse_request(raw)
    assert error in caught.value.error
    assert hint in caught.value.hint
    assert set(caught.value.as_dict()) == {"error", "hint"}


def test_a_minimal_request_is_normalised_with_defaults_and_says_what_it_assumed():
    req = parse_request(BASE)
    data = req.normalised()
    assert data["gpu"] == "NVIDIA A100-SXM4-40GB" and data["gpu_count"] == 1
    assert data["workload"] == {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16,
                                "shared_prefix_tokens": 0, "lora_adapters": 0, "request_rate": None}
    assert any("assumed" in w for w in req.warnings)


def test_flags_accept_cli_spellings_and_keep_their_values():
    req = parse_request({**BASE, "gpu_count": 2, "flags": {"--max-model-len": "8192", "tensor-parallel-size": 2, "dtype": "half"}})
    assert req.flags == {"max_model_len": 8192, "tensor_parallel_size": 2, "dtype": "float16"}


def test_an_engine_version_between_catalogued_releases_is_accepted_with_a_warning():
    req = parse_request({**BASE, "engine": "vLLM", "engine_version": "v0.6.4"})
    assert (req.engine, req.engine_version) == ("vllm", "0.6.4")
    assert any("nearest earlier" in w for w in req.warnings)


def test_a_release_older_than_the_catalog_is_refused_with_the_nearest_known_releases():
    with pytest.raises(AdvisorInputError) as err:
        parse_request({**BASE, "engine": "sglang", "engine_version": "0.1.20"})
    assert "older than every catalogued release" in err.value.error
    assert profile("sglang").releases[0].version in err.value.hint


def test_a_release_between_catalogued_ones_names_the_release_its_facts_come_from():
    req = parse_request({**BASE, "engine": "vllm", "engine_version": "0.6.4"})
    assert req.engine_version == "0.6.4"
    assert any("taken from 0.6.3" in w and "unverified" in w for w in req.warnings)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=False) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
FIELDS = st.sampled_from(["gpu", "gpu_count", "cuda", "model", "engine", "engine_version", "max_context", "workload",
                          "sla", "flags"])


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(FIELDS, JSON, max_size=6))
def test_any_malformed_request_gets_an_answer_or_an_input_error_never_a_crash(raw):
    try:
        out = recommend({"gpu": "NVIDIA L4", "model": "meta-llama/Llama-3.1-8B-Instruct", **raw})
    except AdvisorInputError as exc:
        assert exc.error and exc.hint
    else:
        assert isinstance(out["feasible"], bool)

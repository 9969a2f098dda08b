"""Issue-20 limits on the advisor request: bounded lengths and ranges, finite numbers, and a GPU-name
matcher that stays linear on adversarial input."""
from __future__ import annotations

import time

import pytest

from advisor.catalog import _tokens, resolve_gpu
from advisor.request import MAX_FLAGS
from advisor.validation import AdvisorInputError, parse_request

BASE = {"gpu": "NVIDIA L4", "model": "meta-llama/Llama-3.1-8B-Instruct"}
ADVERSARIAL = ["1" * 40_000, "1 " * 20_000, "1g" * 20_000, "9" * 39_999 + "g", "rtx1" * 10_000, "a1-" * 13_000]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:5]))
def test_the_gpu_name_matcher_is_linear_on_40000_character_inputs(text):
    start = time.perf_counter()
    _tokens(text)
    resolve_gpu(text)
    assert time.perf_counter() - start < 0.5  # quadratic matching took 17 s on 20,000 digits


def test_a_40000_character_gpu_name_is_refused_at_once():
    start = time.perf_counter()
    with pytest.raises(AdvisorInputError) as err:
        parse_request({**BASE, "gpu": "1" * 40_000})
    assert time.perf_counter() - start < 0.5
    assert "gpu is longer than 80 characters" in err.value.error


@pytest.mark.parametrize("patch, error", [
    ({"sla": {"p95_latency_ms": float("nan")}}, "finite"),
    ({"sla": {"p95_ttft_ms": float("inf")}}, "finite"),
    ({"sla": {"p95_tpot_ms": "NaN"}}, "finite"),
    ({"workload": {"request_rate": float("inf")}}, "finite"),
    ({"flags": {"gpu_memory_utilization": float("nan")}}, "finite"),
    ({"flags": {"some_engine_flag": float("-inf")}}, "finite"),
    ({"flags": {"max_model_len": 10**400}}, "beyond what the advisor plans"),
    ({"max_context": "9" * 400}, "max_context"),
    ({"engine": "vllm", "engine_version": "1" * 5000}, "longer than 40 characters"),
    ({"model": "m" * 5000}, "longer than 200 characters"),
    ({"flags": {f"f{i}": 1 for i in range(MAX_FLAGS + 1)}}, f"at most {MAX_FLAGS} flags"),
    ({"flags": {"tensor_parallel_size": [[[1]]]}}, "flags.tensor_parallel_size"),
    ({"flags": {"x": "y" * 201}}, "flags.x"),
    ({"gpu_count": True}, "gpu_count"),
    ({"workload": {"prompt_tokens": 512, "shared_prefix_tokens": 1024}}, "cannot exceed prompt_tokens"),
    ({"workload": {"lora_adapters": -1}}, "workload.lora_adapters must be at least 0"),
    ({"workload": {"request_rate": 0}}, "workload.request_rate must be more than 0"),
])
def test_out_of_range_and_non_finite_values_are_input_errors(patch, error):
    with pytest.raises(AdvisorInputError) as err:
        parse_request({**BASE, **patch})
    assert error in err.value.error
    assert err.value.hint


def test_the_new_workload_fields_are_read():
    req = parse_request({**BASE, "workload": {"prompt_tokens": 4096, "shared_prefix_tokens": 3000, "lora_adapters": 8,
                                              "request_rate": 1.5}})
    assert (req.workload.shared_prefix_tokens, req.workload.lora_adapters, req.workload.request_rate) == (3000, 8, 1.5)

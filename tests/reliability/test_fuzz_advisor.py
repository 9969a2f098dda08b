"""Hostile advisor input: any JSON a client can send gets a recommendation or a clean AdvisorInputError.

Hypothesis mixes valid values (real GPU and model names, sensible numbers) with wrong types,
negative and huge numbers, unknown keys and junk strings, field by field.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from advisor.services import recommend
from advisor.validation import AdvisorInputError

pytestmark = pytest.mark.slow

junk = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=True),
                 st.text(max_size=30), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5),
                                                                                             st.integers(), max_size=2))


def mostly(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Valid values nine times in ten, junk otherwise, so the deep code paths are reached too."""
    return st.integers(0, 9).flatmap(lambda pick: valid if pick else junk)


gpus = st.sampled_from(["A100-SXM4-40GB", "H100 SXM", "T4", "V100-SXM2-16GB", "RTX 4090", "L4", "B9000", ""])
models = st.sampled_from(["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-72B-Instruct", "mistralai/Mixtral-8x7B-v0.1",
                          "google/gemma-2-9b-it", "acme/unknown-13b", "nonsense"])
numbers = mostly(st.integers(-5, 300000))
requests = st.fixed_dictionaries(
    {"gpu": mostly(gpus), "model": mostly(models)},
    optional={
        "gpu_count": numbers, "cuda": mostly(st.sampled_from(["11.8", "12.1", "12.4", "10.2", "x"])),
        "engine": mostly(st.sampled_from(["vllm", "sglang", "tgi", "tensorrt-llm", "llama.cpp", "nope"])),
        "engine_version": mostly(st.sampled_from(["0.6.3", "0.4.0", "99"])),
        "max_context": numbers,
        "workload": mostly(st.fixed_dictionaries({}, optional={"prompt_tokens": numbers, "output_tokens": numbers,
                                                                "concurrency": numbers})),
        "sla": mostly(st.fixed_dictionaries({}, optional={"p95_latency_ms": numbers, "p95_ttft_ms": numbers})),
        "flags": mostly(st.fixed_dictionaries({}, optional={"gpu_memory_utilization": mostly(st.floats(-1, 2)),
                                                             "max_model_len": numbers, "tensor_parallel_size": numbers,
                                                             "dtype": mostly(st.sampled_from(["bf16", "fp16", "fp8"]))})),
        "surprise": junk,
    },
)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(request=requests)
def test_any_request_gets_an_answer_or_a_clean_input_error(request: dict) -> None:
    try:
        response = recommend(request)
    except AdvisorInputError as exc:
        assert exc.error and exc.hint, "an input error must say what is wrong and how to fix it"
        event("input error")
        return
    event("feasible" if response["feasible"] else "infeasible")
    assert isinstance(response["feasible"], bool)
    assert response["feasible"] == bool(response["recommendations"])
    if not response["feasible"]:
        assert response["rejected"] or response["warnings"] or response["actions"], "say why nothing fits"

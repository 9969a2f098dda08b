"""Step times come from aiconfigurator-core's measured per-op latencies where it covers the setup, else the roofline."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from advisor.calibration import StepFit
from advisor.estimate import estimate, step_times
from advisor.model_specs import resolve_model
from advisor.perf import StepModel
from advisor.planner import enumerate_options
from advisor.silicon import (
    SiliconStepModel,
    SiliconTarget,
    SiliconUnavailable,
    model_path_for,
    nearest_measured,
    nearest_version,
)
from advisor.validation import parse_request

H200_VLLM = SiliconTarget("h200_sxm", "vllm", "0.24.0", "meta-llama/Meta-Llama-3.1-8B")


def test_measured_decode_steps_grow_with_batch_and_context():
    step = SiliconStepModel(H200_VLLM)
    small, wide, long = (step.step_seconds(0, 0.0, 1, 1024), step.step_seconds(0, 0.0, 128, 128 * 1024),
                         step.step_seconds(0, 0.0, 128, 128 * 8192))
    assert 0.001 < small < wide < long < 1.0


def test_a_prompt_chunk_costs_more_than_a_decode_token_and_the_fitted_scales_apply():
    step = SiliconStepModel(H200_VLLM)
    assert step.step_seconds(4096, 2048.0, 0, 0.0, 1) > 4 * step.step_seconds(0, 0.0, 1, 2048)
    scaled = SiliconStepModel(H200_VLLM, scale=2.0, step_overhead_s=0.001, per_seq_overhead_s=0.0001, prefill_scale=2.0)
    one = step.step_seconds(512, 256.0, 8, 8 * 1024, 1)
    assert scaled.step_seconds(512, 256.0, 8, 8 * 1024, 1) == pytest.approx(2 * one + 0.001 + 9 * 0.0001, rel=1e-6)
    slow_prefill = SiliconStepModel(H200_VLLM, prefill_scale=3.0)
    assert slow_prefill.step_seconds(0, 0.0, 8, 8 * 1024) == step.step_seconds(0, 0.0, 8, 8 * 1024)
    assert slow_prefill.step_seconds(2048, 1024.0, 0, 0.0, 1) == pytest.approx(3 * step.step_seconds(2048, 1024.0, 0, 0.0, 1))


def test_the_moe_kernels_floor_is_paid_whole_by_a_decode_step_and_hidden_under_a_long_prompt_chunk():
    step, floored = SiliconStepModel(H200_VLLM), SiliconStepModel(H200_VLLM, moe_floor_s=0.002)
    decode = step.step_seconds(0, 0.0, 8, 8 * 1024)
    assert floored.step_seconds(0, 0.0, 8, 8 * 1024) == pytest.approx(decode + 0.002)
    chunk = step.step_seconds(8192, 4096.0, 0, 0.0, 1)
    assert chunk > 0.002  # an 8k-token chunk's compute outlasts the floor: nothing is added
    assert floored.step_seconds(8192, 4096.0, 0, 0.0, 1) == pytest.approx(chunk)


def test_the_fitted_moe_floor_counts_a_models_layers_only_when_it_has_experts():
    fit = StepFit(1.0, 0.0, per_moe_layer_overhead_s=2e-5)
    dense = resolve_model("meta-llama/Llama-2-13b-chat-hf")[0]
    assert dense is not None and not dense.experts
    assert fit.moe_floor_s(dense) == 0.0
    moe = replace(dense, experts=8)
    assert fit.moe_floor_s(moe) == pytest.approx(2e-5 * dense.layers)


def test_a_configuration_without_measurements_is_refused_not_guessed():
    with pytest.raises(SiliconUnavailable):
        SiliconStepModel(SiliconTarget("a100_sxm", "vllm", "0.14.0", "meta-llama/Meta-Llama-3.1-8B", gemm_quant="int4_wo"))


def test_an_unmeasured_kv_format_falls_back_to_the_nearest_measured_kernels_and_says_so():
    wanted = SiliconTarget("a100_sxm", "vllm", "0.14.0", "meta-llama/Meta-Llama-3.1-8B", kv_quant="fp8")
    found = nearest_measured(wanted)
    assert found is not None
    measured, why = found
    assert measured.kv_quant is None and "KV cache" in why
    assert nearest_measured(SiliconTarget("h200_sxm", "vllm", "0.24.0", "meta-llama/Meta-Llama-3.1-8B")) == (
        SiliconTarget("h200_sxm", "vllm", "0.24.0", "meta-llama/Meta-Llama-3.1-8B"), "")
    assert nearest_measured(replace(wanted, gemm_quant="int4_wo")) is None


def test_the_nearest_measured_release_stands_in_for_an_older_one():
    assert nearest_version("a100_sxm", "vllm", "0.6.3") == "0.14.0"
    assert nearest_version("l4", "vllm", "0.6.3") is None  # no slots for this system


def test_a_dense_model_outside_aiconfigurators_configs_is_built_from_our_spec():
    spec = resolve_model("meta-llama/Llama-2-13b-chat-hf")[0]
    path = model_path_for(spec)
    assert path is not None and (Path(path) / "config.json").is_file()
    SiliconStepModel(SiliconTarget("a100_sxm", "vllm", "0.14.0", path))


def _options(raw):
    req = parse_request(raw)
    return req, enumerate_options(req).options


def test_the_advisor_uses_measured_steps_on_a_covered_gpu_and_the_roofline_elsewhere():
    covered_req, covered = _options({"gpu": "H100", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                                     "workload": {"prompt_tokens": 1024, "output_tokens": 128, "concurrency": 8}})
    plain = next(o for o in covered if o.quant.method is None and o.kv_dtype is None)
    step, source = step_times(covered_req, plain)
    assert isinstance(step, SiliconStepModel) and "aiconfigurator-core" in source and "h100_sxm" in source
    t4_req, t4 = _options({"gpu": "T4", "model": "meta-llama/Llama-3.2-1B-Instruct", "engine": "vllm",
                           "workload": {"prompt_tokens": 512, "output_tokens": 64, "concurrency": 4}})
    step, source = step_times(t4_req, t4[0])
    assert isinstance(step, StepModel) and "roofline" in source
    assert "roofline" in estimate(t4_req, t4[0]).step_source


def test_a_release_with_measured_runs_of_its_own_corrects_the_decode_scale_and_says_so():
    from advisor.calibration import calibration

    engine = calibration().engine("vllm")
    release, own = next(iter(engine.releases.items()))  # the shipped file fits at least one vLLM release
    req, options = _options({"gpu": "H100", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                             "engine_version": release,
                             "workload": {"prompt_tokens": 1024, "output_tokens": 128, "concurrency": 8}})
    plain = next(o for o in options if o.quant.method is None and o.kv_dtype is None)
    step, source = step_times(req, plain)
    assert isinstance(step, SiliconStepModel)
    assert step.scale == pytest.approx(engine.silicon.scale * own.decode)
    assert step.prefill_scale == engine.silicon.prefill_scale
    assert f"measured runs of {release}" in source and f"{own.decode:g}" in source

"""The roofline step model reads each GPU's real share of the KV cache, times MLA decode attention in its
absorbed form, and charges the fitted per-layer kernel floor."""
from __future__ import annotations

import pytest

from advisor.calibration import StepFit
from advisor.model_specs import ModelSpec
from advisor.perf import Efficiency, Hardware, StepModel
from advisor.sizing import kv_bytes_per_token

BANDWIDTH = 1e12
NO_OVERHEAD = Efficiency(bandwidth=1.0, compute=1.0, step_overhead_s=0.0, per_seq_overhead_s=0.0,
                         allreduce_latency_s=0.0)


def _spec(**shape: float) -> ModelSpec:
    base = {"id": "test/model", "architecture": "TestForCausalLM", "layers": 10, "hidden": 1024, "heads": 16,
            "kv_heads": 4, "head_dim": 64, "intermediate": 4096, "vocab": 32000, "max_context": 32768,
            "dtype": "bfloat16", "params_total": 1e9, "params_active": 1e9, "embedding_params": 6.5e7,
            "source": "a shape made up for the test"}
    return ModelSpec(**{**base, **shape})


def _step(spec: ModelSpec, tp: int, eff: Efficiency = NO_OVERHEAD, flops: float = 1e30) -> StepModel:
    hw = Hardware(bandwidth_bytes_s=BANDWIDTH, flops=flops, link_bytes_s=1e30, tp=tp, pp=1)
    return StepModel(spec, hw, 16, None, 2.0, eff)


def _kv_read_s(step: StepModel, context: float) -> float:
    """Seconds a decode step spends on `context` cached tokens beyond its weights."""
    return step.step_seconds(0, 0.0, 1, context) - step.step_seconds(0, 0.0, 1, 0.0)


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_grouped_kv_heads_split_across_gpus_while_there_are_enough_of_them(tp):
    spec = _spec()
    per_token = 2 * spec.layers * spec.kv_heads * spec.head_dim * 2.0
    assert _kv_read_s(_step(spec, tp), 1e6) == pytest.approx(per_token / tp * 1e6 / BANDWIDTH)


def test_kv_heads_fewer_than_gpus_are_replicated_so_each_gpu_still_reads_one_head():
    spec = _spec()
    assert _kv_read_s(_step(spec, 8), 1e6) == pytest.approx(_kv_read_s(_step(spec, 4), 1e6))


def test_an_mla_latent_is_read_whole_by_every_gpu():
    spec = _spec(kv_lora_rank=512, qk_rope_head_dim=64, heads=128, kv_heads=128)
    whole = kv_bytes_per_token(spec, 2.0) * 1e6 / BANDWIDTH
    assert _kv_read_s(_step(spec, 1), 1e6) == pytest.approx(whole)
    assert _kv_read_s(_step(spec, 8), 1e6) == pytest.approx(whole)


def test_mla_decode_attention_scores_and_sums_the_whole_latent_per_head():
    spec = _spec(kv_lora_rank=512, qk_rope_head_dim=64, heads=128, kv_heads=128)
    compute_bound = _step(spec, 1, flops=1e9)  # so slow that compute, not memory, sets the step time
    attention = compute_bound.step_seconds(0, 0.0, 1, 1000.0) - compute_bound.step_seconds(0, 0.0, 1, 0.0)
    expected_flops = 2 * spec.layers * spec.heads * (2 * 512 + 64) * 1000.0
    assert attention == pytest.approx(expected_flops / 1e9)


def test_the_per_layer_floor_is_paid_once_per_layer_per_step():
    spec = _spec(layers=40)
    floor = Efficiency(bandwidth=1.0, compute=1.0, step_overhead_s=0.0, per_seq_overhead_s=0.0,
                       allreduce_latency_s=0.0, per_layer_overhead_s=5e-5)
    extra = _step(spec, 1, floor).step_seconds(0, 0.0, 8, 0.0) - _step(spec, 1).step_seconds(0, 0.0, 8, 0.0)
    assert extra == pytest.approx(40 * 5e-5)


def test_the_moe_layer_floor_is_paid_per_layer_by_models_with_experts_only():
    floor = Efficiency(bandwidth=1.0, compute=1.0, step_overhead_s=0.0, per_seq_overhead_s=0.0,
                       allreduce_latency_s=0.0, per_moe_layer_overhead_s=1e-4)
    moe, dense = _spec(layers=30, experts=64, experts_per_token=4, intermediate=512), _spec(layers=30)
    for spec, expected in ((moe, 30 * 1e-4), (dense, 0.0)):
        extra = _step(spec, 1, floor).step_seconds(0, 0.0, 8, 0.0) - _step(spec, 1).step_seconds(0, 0.0, 8, 0.0)
        assert extra == pytest.approx(expected)


def test_the_moe_layer_floor_is_hidden_under_the_prompt_compute_that_covers_it():
    spec = _spec(layers=30, experts=64, experts_per_token=4, intermediate=512)
    bare = Efficiency(bandwidth=1e30, compute=1.0, step_overhead_s=0.0, per_seq_overhead_s=0.0,
                      allreduce_latency_s=0.0)
    floor = Efficiency(**{**bare.__dict__, "per_moe_layer_overhead_s": 1e-4})
    flops = 2 * spec.params_active * 100 / (30 * 1e-4)  # 100 prompt tokens compute for the whole floor

    def extra(prefill_tokens: int, decode_seqs: int) -> float:
        def run(eff: Efficiency) -> float:
            return _step(spec, 1, eff, flops).step_seconds(prefill_tokens, 0.0, decode_seqs, 0.0,
                                                           1 if prefill_tokens else 0)
        return run(floor) - run(bare)

    assert extra(0, 64) == pytest.approx(30 * 1e-4)  # a decode step pays all of it
    assert extra(50, 8) == pytest.approx(30 * 1e-4 / 2)  # half covered by the prompt chunk
    assert extra(4096, 8) == pytest.approx(0.0, abs=1e-12)  # a long prefill chunk hides it


def test_a_fit_becomes_the_efficiencies_it_stands_for():
    fit = StepFit(scale=2.0, step_overhead_s=0.001, per_seq_overhead_s=1e-5, prefill_scale=0.5,
                  per_layer_overhead_s=2e-5, per_moe_layer_overhead_s=7e-5)
    assert fit.efficiency().per_moe_layer_overhead_s == 7e-5
    eff = fit.efficiency()
    assert eff.bandwidth == pytest.approx(Efficiency().bandwidth / 2)
    assert eff.compute == pytest.approx(Efficiency().compute * 2)
    assert (eff.step_overhead_s, eff.per_seq_overhead_s, eff.per_layer_overhead_s) == (0.001, 1e-5, 2e-5)

"""Closed-loop clients drift out of step: steady-state TTFT, prefills riding in decode steps, the per-request cost."""
from __future__ import annotations

import pytest

from advisor.catalog import gpus
from advisor.model_specs import resolve_model
from advisor.perf import Hardware, StepModel
from advisor.simulate import SimConfig, Simulator, percentile

LLAMA8B = resolve_model("meta-llama/Llama-3.1-8B-Instruct")[0]
STEP = StepModel(LLAMA8B, Hardware.from_gpu(gpus()["h100-sxm5-80gb"], "bf16", 1, 1), 16, None, 2)


def _run(users=64, prompt=2048, output=256, chunked=True, budget=8192, **kwargs):
    cfg = SimConfig(kv_tokens=2_000_000, max_num_seqs=256, batched_tokens=budget, chunked_prefill=chunked)
    return Simulator(STEP, cfg, prompt, output, users, **kwargs).run()


def test_staggered_users_see_a_steady_state_ttft_far_below_the_all_at_once_wave():
    together = _run(chunked=False, budget=200_000)  # one wave: every prompt prefilled in the same step
    wave = [r.ttft_s for r in together.served if not r.steady]
    staggered = _run(stagger=True).summary()
    assert len(wave) == 64
    assert staggered["ttft_p95_ms"] < 0.25 * max(wave) * 1e3


def test_the_first_wave_is_served_but_left_out_of_the_percentiles():
    result = _run(users=8, stagger=True)
    warm_up = [r for r in result.served if not r.steady]
    assert len(warm_up) == 8 and len(result.served) == 24
    steady = [r.ttft_s for r in result.served if r.steady]
    assert result.summary()["ttft_p50_ms"] == pytest.approx(percentile(steady, 50) * 1e3)


def test_decode_steps_that_carry_new_prefills_raise_tpot_on_prefill_heavy_runs():
    result = _run(stagger=True).summary()
    pure_decode = STEP.step_seconds(0, 0.0, 64, 64 * (2048 + 128))
    assert result["tpot_p50_ms"] > 1.2 * pure_decode * 1e3


def test_the_engines_own_admission_order_spreads_a_wave_that_starts_together():
    # a chunk budget of four prompts per step admits the wave in groups that keep their places
    grouped = _run(budget=8192).summary()
    one_wave = _run(chunked=False, budget=200_000).summary()
    assert grouped["ttft_p50_ms"] < 0.5 * one_wave["ttft_p50_ms"]


def test_the_fixed_per_request_cost_adds_to_every_ttft():
    base = _run(users=1, prompt=512, output=32).summary()
    slow = _run(users=1, prompt=512, output=32, request_overhead_s=0.2).summary()
    assert slow["ttft_p50_ms"] - base["ttft_p50_ms"] == pytest.approx(200, abs=1)


def test_think_time_leaves_the_server_idle_between_a_users_requests():
    busy = _run(users=4, prompt=512, output=64).summary()
    thinking = _run(users=4, prompt=512, output=64, think_time_s=5.0).summary()
    assert thinking["throughput_tok_s"] < 0.5 * busy["throughput_tok_s"]


def test_spread_lengths_are_drawn_within_the_range_and_repeat_with_the_seed():
    result = _run(users=8, prompt=1000, output=100, min_length_ratio=0.8, num_requests=80)
    outputs = [r.output for r in result.served]
    assert all(80 <= n <= 100 for n in outputs) and len(set(outputs)) > 5
    again = _run(users=8, prompt=1000, output=100, min_length_ratio=0.8, num_requests=80)
    assert [r.output for r in again.served] == outputs


def test_spread_lengths_desynchronise_a_wave_that_starts_together():
    # equal requests started at once keep finishing (and prefilling) together; unequal ones drift apart
    equal = _run(chunked=False, budget=200_000, num_requests=640).summary()
    spread = _run(chunked=False, budget=200_000, num_requests=640, min_length_ratio=0.8).summary()
    assert spread["ttft_p50_ms"] < 0.5 * equal["ttft_p50_ms"]


def test_the_whole_run_summary_counts_the_first_wave_and_gives_means():
    result = _run(users=8, stagger=False)
    every = result.summary(include_warm_up=True)
    ttfts = [r.ttft_s for r in result.served]
    assert every["ttft_mean_ms"] == pytest.approx(sum(ttfts) / len(ttfts) * 1e3)
    assert every["ttft_p50_ms"] == pytest.approx(percentile(ttfts, 50) * 1e3)
    assert result.summary()["ttft_p50_ms"] != every["ttft_p50_ms"]


def test_in_flight_batching_runs_whole_prompts_inside_the_decode_steps():
    # unchunked prompts either stall every decoder for a step of their own or ride along in it
    def run(mixed):
        cfg = SimConfig(kv_tokens=2_000_000, max_num_seqs=256, batched_tokens=8192, chunked_prefill=False,
                        mixed_steps=mixed)
        return Simulator(STEP, cfg, 2048, 256, 32, stagger=True).run().summary()
    apart, mixed = run(False), run(True)
    assert mixed["tpot_p50_ms"] < apart["tpot_p50_ms"]
    assert mixed != apart

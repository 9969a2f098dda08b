"""The roofline step model and the continuous-batching simulation behave like a serving engine."""
from __future__ import annotations

import pytest

from advisor.catalog import gpus
from advisor.model_specs import resolve_model
from advisor.perf import Hardware, StepModel
from advisor.simulate import SimConfig, Simulator, percentile

LLAMA8B = resolve_model("meta-llama/Llama-3.1-8B-Instruct")[0]


def step_model(gpu_id="a100-sxm4-40gb", tp=1, model=LLAMA8B, bits=16, method=None):
    return StepModel(model, Hardware.from_gpu(gpus()[gpu_id], "bf16", tp, 1), bits, method, 2)


def run(concurrency, kv_tokens=150_000, seqs=256, chunked=True, step=None, prompt=1024, output=128):
    cfg = SimConfig(kv_tokens=kv_tokens, max_num_seqs=seqs, batched_tokens=2048, chunked_prefill=chunked)
    return Simulator(step or step_model(), cfg, prompt, output, concurrency).run()


def test_single_stream_decode_is_bandwidth_bound():
    step = step_model()
    t = step.step_seconds(0, 0.0, 1, 1024)
    ideal = 2 * LLAMA8B.params_total / (gpus()["a100-sxm4-40gb"].bandwidth_gbs * 1e9)
    assert ideal < t < 2 * ideal


def test_prefill_is_compute_bound():
    step = step_model()
    t = step.step_seconds(2048, 1024.0, 0, 0)
    flops = 2 * LLAMA8B.params_total * 2048 / (gpus()["a100-sxm4-40gb"].peak_tflops("bf16") * 1e12)
    assert t > flops


def test_tensor_parallelism_adds_all_reduce_time_on_slow_links():
    nvlink = step_model("a100-sxm4-80gb", tp=2).step_seconds(0, 0.0, 64, 64 * 1024)
    pcie = step_model("a100-pcie-80gb", tp=2).step_seconds(0, 0.0, 64, 64 * 1024)
    assert pcie > nvlink


def test_moe_decode_reads_only_the_experts_the_batch_touches():
    mixtral = resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1")[0]
    step = step_model("h100-sxm5-80gb", tp=2, model=mixtral)
    one, many = step.step_seconds(0, 0.0, 1, 1024), step.step_seconds(0, 0.0, 64, 64 * 1024)
    assert one < many / 2


def test_latency_grows_with_load():
    low, high = run(1).summary(), run(64).summary()
    assert high["ttft_p95_ms"] > low["ttft_p95_ms"]
    assert high["tpot_p95_ms"] > low["tpot_p95_ms"]
    assert high["e2e_p95_ms"] > low["e2e_p95_ms"]


def test_throughput_grows_then_saturates():
    tput = [run(c, seqs=64).summary()["throughput_tok_s"] for c in (1, 8, 64, 256)]
    assert tput[0] < tput[1] < tput[2]
    assert tput[3] == pytest.approx(tput[2], rel=0.15)  # max_num_seqs caps the batch: more clients only queue


def test_a_small_kv_cache_forces_preemption_and_hurts_latency():
    roomy, tight = run(32, kv_tokens=200_000), run(32, kv_tokens=12_000)
    assert tight.preemptions > 0 and roomy.preemptions == 0
    assert tight.summary()["e2e_p95_ms"] > roomy.summary()["e2e_p95_ms"]


def test_every_request_completes_once():
    result = run(8)
    assert len(result.e2e_s) == 24 and result.output_tokens == 24 * 128


def test_a_prompt_larger_than_the_whole_cache_is_rejected_not_looped():
    result = run(2, kv_tokens=512, prompt=4096)
    assert result.rejected == 24 and result.output_tokens == 0


def test_chunked_prefill_keeps_decode_latency_smoother_than_prefill_first():
    chunked = run(32, chunked=True, prompt=2048).summary()
    whole = run(32, chunked=False, prompt=2048).summary()
    assert chunked["tpot_p95_ms"] < whole["tpot_p95_ms"]


def test_percentile_interpolates_like_numpy():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 95) == 0.0


def _sim(concurrency=16, prompt=4096, output=128, **kwargs):
    cfg = SimConfig(kv_tokens=150_000, max_num_seqs=256, batched_tokens=2048, chunked_prefill=True)
    return Simulator(step_model(), cfg, prompt, output, concurrency, **kwargs).run()


def test_prefix_cache_hits_skip_prefill_and_cut_time_to_first_token():
    cold, warm = _sim(), _sim(prefix_tokens=3584)
    assert cold.prefix_hits == 0 and warm.prefix_hits > 0
    # the first wave arrives together and computes the prefix itself; the requests after it hit the cache
    assert warm.summary()["ttft_p50_ms"] < 0.6 * cold.summary()["ttft_p50_ms"]
    assert len(warm.served) == len(cold.served)


def test_poisson_arrivals_are_repeatable_and_queue_up_as_the_rate_grows():
    a, b = _sim(request_rate=2.0, seed=7), _sim(request_rate=2.0, seed=7)
    assert a.summary() == b.summary()
    light, heavy = _sim(request_rate=0.5), _sim(request_rate=20.0)
    assert heavy.summary()["ttft_p95_ms"] > light.summary()["ttft_p95_ms"]
    # about a minute of arrivals at the given rate, bounded
    assert 24 <= len(light.served) <= 400 and len(heavy.served) == 400


def test_an_open_loop_is_not_a_closed_loop():
    closed, open_loop = _sim(concurrency=4), _sim(concurrency=4, request_rate=0.2)
    # a light open loop leaves the server idle between requests: lower latency, lower throughput
    assert open_loop.summary()["throughput_tok_s"] < closed.summary()["throughput_tok_s"]


def test_goodput_counts_only_requests_within_every_limit():
    result = _sim(concurrency=32)
    all_fraction, all_tok_s = result.goodput(None, None, None)
    assert all_fraction == 1.0 and all_tok_s == pytest.approx(result.summary()["throughput_tok_s"])
    median_ttft = result.summary()["ttft_p50_ms"] / 1e3
    fraction, tok_s = result.goodput(median_ttft, None, None)
    assert 0.3 < fraction < 0.8 and tok_s < all_tok_s
    assert result.goodput(1e-6, None, None) == (0.0, 0.0)


def test_chunked_prefill_bounds_the_decode_stall_long_prompts_cause():
    chunked = _sim(concurrency=32, prompt=8192)
    cfg = SimConfig(kv_tokens=400_000, max_num_seqs=256, batched_tokens=2048, chunked_prefill=False)
    whole = Simulator(step_model(), cfg, 8192, 128, 32).run()
    assert chunked.summary()["tpot_p95_ms"] < whole.summary()["tpot_p95_ms"]

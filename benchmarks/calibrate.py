"""`python -m benchmarks.calibrate`: how well the advisor's performance model predicts a real engine.

Run by hand (minutes; not part of the test suite). The "GPU" is this machine: its memory bandwidth
and matmul throughput are measured first, in the engine's compute dtype. Then workloads run through
our own engine (`from inference import LLM, SamplingParams`, the packaged Qwen2.5-Coder-0.5B) and
through the advisor's roofline + continuous-batching simulation with the same scheduler limits and
KV-cache size. The efficiency factors are fitted on the first half of the workloads and the error is
reported on the other half, so the figure is a prediction error, not a fit residual (target <= 20%).
"""
from __future__ import annotations

import argparse
import itertools
import os
import random
import time
from dataclasses import asdict, dataclass
from typing import Any

from advisor.model_specs import resolve_model
from advisor.perf import Efficiency, Hardware, StepModel
from advisor.simulate import SimConfig, Simulator, percentile
from benchmarks.advisor import emit
from inference.timing import timings

ENGINE_MODEL = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
METRICS = ("ttft_p50_ms", "tpot_p50_ms", "e2e_p95_ms", "throughput_tok_s")


@dataclass(frozen=True)
class Workload:
    requests: int
    prompt: int
    output: int
    max_num_seqs: int
    batched_tokens: int


WORKLOADS = [Workload(4, 96, 12, 4, 256), Workload(8, 48, 16, 8, 256),  # fitted on these
             Workload(6, 160, 10, 6, 256), Workload(12, 32, 12, 12, 128)]  # evaluated on these
QUICK = [Workload(2, 48, 6, 2, 128), Workload(4, 32, 8, 4, 128), Workload(3, 64, 6, 3, 128), Workload(4, 24, 8, 4, 64)]


def measure_machine(dtype: Any) -> tuple[float, float]:
    """(memory bandwidth in bytes/s, matmul FLOP/s) of this machine in `dtype`, best of several warm runs
    (the roofline's peaks; the fitted efficiency factors say how much of them the engine reaches)."""
    import torch  # noqa: PLC0415 - only the calibration needs torch

    x = torch.ones(32 * 1024 * 1024, dtype=dtype)
    y = torch.empty_like(x)
    bandwidth = 2 * x.numel() * x.element_size() / _best(lambda: y.copy_(x))
    a, w = torch.randn(512, 896, dtype=dtype), torch.randn(4864, 896, dtype=dtype)
    flops = 2 * 512 * 896 * 4864 / _best(lambda: torch.nn.functional.linear(a, w))
    return bandwidth, flops


def _best(fn: Any, runs: int = 7) -> float:
    # one warm-up call: first calls pay for allocation and kernel selection
    return min(timings(fn, runs, warmup=1))


def anchor_s() -> float:
    """Seconds for a fixed CPU-bound torch workload (best of 3): how much of the machine this process gets now."""
    import torch  # noqa: PLC0415

    a = torch.ones(256, 896, dtype=torch.bfloat16)
    w = torch.ones(896, 896, dtype=torch.bfloat16)
    return _best(lambda: [torch.nn.functional.linear(a, w) for _ in range(20)], runs=3)


def run_engine(llm: Any, params_cls: Any, w: Workload, seed: int) -> dict[str, float]:
    """Run one workload through our engine; all requests arrive together, as `generate` submits them.

    `slowdown` is the anchor measured around the run, so a shared machine's contention can be
    divided out when comparing with the prediction."""
    rng = random.Random(seed)
    prompts = [[rng.randrange(1000, 30000) for _ in range(w.prompt)] for _ in range(w.requests)]
    engine = llm.engine
    engine.scheduler.max_num_seqs = w.max_num_seqs
    engine.scheduler.max_num_batched_tokens = w.batched_tokens
    before = anchor_s()
    start = time.perf_counter()
    outputs = llm.generate(prompts, params_cls(max_tokens=w.output, temperature=0.0, ignore_eos=True))
    wall = time.perf_counter() - start
    after = anchor_s()
    ttft = [o.metrics.ttft_s for o in outputs]
    tpot = [o.metrics.tpot_s for o in outputs]
    e2e = [o.metrics.e2e_s for o in outputs]
    return {"ttft_p50_ms": percentile(ttft, 50) * 1e3, "tpot_p50_ms": percentile(tpot, 50) * 1e3,
            "e2e_p95_ms": percentile(e2e, 95) * 1e3, "throughput_tok_s": sum(len(o.token_ids) for o in outputs) / wall,
            "anchor_s": (before + after) / 2}


def predict(w: Workload, hw: Hardware, bits: float, kv_tokens: int, eff: Efficiency, slowdown: float = 1.0) -> dict[str, float]:
    """The advisor's estimate for one workload on this machine (times scaled by the measured `slowdown`)."""
    spec = resolve_model(ENGINE_MODEL)[0]
    step = StepModel(spec, hw, bits, None, bits / 8, eff)
    cfg = SimConfig(kv_tokens=kv_tokens, max_num_seqs=w.max_num_seqs, batched_tokens=w.batched_tokens, chunked_prefill=True)
    summary = Simulator(step, cfg, w.prompt, w.output, w.requests, num_requests=w.requests).run().summary()
    out = {k: summary[k] * slowdown for k in METRICS}
    out["throughput_tok_s"] = summary["throughput_tok_s"] / slowdown
    return out


def _slowdown(measured: dict[str, float], reference: float | None) -> float:
    return measured["anchor_s"] / reference if reference and measured.get("anchor_s") else 1.0


def errors(measured: dict[str, float], predicted: dict[str, float]) -> dict[str, float]:
    return {k: (predicted[k] - measured[k]) / measured[k] for k in METRICS if measured[k] > 0}


def fit(samples: list[tuple[Workload, dict[str, float]]], hw: Hardware, bits: float, kv_tokens: int,
        reference: float | None = None) -> Efficiency:
    """Efficiency factors minimising the mean absolute relative error on `samples` (grid search)."""
    fractions = [0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 1.0, 1.5, 2.0]
    grid = itertools.product(fractions, fractions, [0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0],
                             [0.0, 0.001, 0.005, 0.02, 0.1, 0.5])
    best, best_err = Efficiency(), float("inf")
    for bw, comp, step_s, seq_s in grid:
        eff = Efficiency(bandwidth=bw, compute=comp, step_overhead_s=step_s, per_seq_overhead_s=seq_s, allreduce_latency_s=0.0)
        errs = [abs(e) for w, m in samples
                for e in errors(m, predict(w, hw, bits, kv_tokens, eff, _slowdown(m, reference))).values()]
        score = sum(errs) / len(errs)
        if score < best_err:
            best, best_err = eff, score
    return best


def _load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller workloads (for a busy machine)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for the engine and the measurements (1 is steadiest on a shared machine)")
    args = parser.parse_args(argv)
    import torch  # noqa: PLC0415

    torch.set_num_threads(args.threads)
    from inference import LLM, SamplingParams  # noqa: PLC0415 - the engine is only needed here

    # dense weights: the roofline models weights and FLOPs in the compute dtype, as the engines it advises on run them
    llm = LLM(max_num_seqs=16, max_num_batched_tokens=256, quantization="none")
    dtype = llm.config.torch_dtype
    bits = 8 * (2 if "16" in str(dtype) else 4)
    reference = anchor_s()
    bandwidth, flops = measure_machine(dtype)
    reference = (reference + anchor_s()) / 2
    load = _load_average()
    hw = Hardware(bandwidth_bytes_s=bandwidth, flops=flops, link_bytes_s=1e12, tp=1, pp=1)
    kv_tokens = llm.engine.scheduler.block_manager.num_blocks * llm.config.block_size
    workloads = QUICK if args.quick else WORKLOADS
    run_engine(llm, SamplingParams, workloads[0], seed=99)  # warm-up
    measured = [(w, run_engine(llm, SamplingParams, w, seed=i)) for i, w in enumerate(workloads)]
    half = len(measured) // 2
    eff = fit(measured[:half], hw, bits, kv_tokens, reference)
    rows = []
    for i, (w, m) in enumerate(measured):
        p = predict(w, hw, bits, kv_tokens, eff, _slowdown(m, reference))
        rows.append({"workload": asdict(w), "role": "fit" if i < half else "held-out", "slowdown": _slowdown(m, reference),
                     "measured": m, "predicted": p,
                     "error": errors(m, p)})
    held = [abs(e) for r in rows if r["role"] == "held-out" for e in r["error"].values()]
    report = {"machine": {"bandwidth_gb_s": bandwidth / 1e9, "tflops": flops / 1e12, "dtype": str(dtype), "kv_tokens": kv_tokens,
                          "load_average_1m": load, "cpus": os.cpu_count()},
              "efficiency": asdict(eff), "rows": rows, "held_out_mean_abs_error": sum(held) / len(held),
              "held_out_max_abs_error": max(held)}
    lines = [f"machine: {bandwidth / 1e9:.1f} GB/s, {flops / 1e12:.3f} TFLOP/s ({dtype}); KV cache {kv_tokens} tokens; "
             f"load average {load:.1f} on {os.cpu_count()} CPUs", f"fitted efficiency: {asdict(eff)}"]
    for r in rows:
        cells = "  ".join(f"{k} {r['measured'][k]:.1f}->{r['predicted'][k]:.1f} ({r['error'][k]:+.0%})" for k in METRICS)
        lines.append(f"[{r['role']:8}] {r['workload']} slowdown x{r['slowdown']:.2f}: {cells}")
    lines.append(f"held-out mean |error| {report['held_out_mean_abs_error']:.0%}, max {report['held_out_max_abs_error']:.0%} "
                 "(target <= 20%)")
    emit(report, args.json, lines)
    return report


if __name__ == "__main__":
    main()

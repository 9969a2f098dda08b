"""`python -m inference.profile --model PATH`: where a step's time goes, for the issue's profile.

Measures, on one engine, with the int8 decode copies on and off (the same weights; `int8_blocks.MAX_ROWS`
set to 0 sends every call to the bf16 weights), alternated so both see the same machine:
- a prefill step of one 500-token prompt (time per prompt token);
- decode steps at 16 and at 1 sequence (context ~128 tokens);
- the projections alone at those row counts (every layer's four plus the output head), so the time outside
  the matmuls is the step minus them; their FLOP/s and the bytes they stream per second;
- the machine's read bandwidth, and the bytes of weights one decode step reads;
- with --quality, how far each int8 path moves the next-token distributions from dense weights (mean KL and
  top-1 agreement over inference.quality's fixed prompts; each path loads the model once more).
Not a test: timings depend on whatever else runs on the machine (its load average is printed).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import torch

from inference.bench import read_bandwidth_gbs
from inference.config import Config
from inference.engine import LLM, LLMEngine
from inference.layers import int8_blocks
from inference.layers.linear import Linear, int8_available
from inference.quality import PROMPTS, compare, reference_continuation
from inference.sampling_params import SamplingParams


def step_times(engine: LLMEngine, prompts: list[list[int]], max_tokens: int) -> list[float]:
    """Seconds of every engine step while `prompts` run to `max_tokens` each from a cold prefix cache."""
    engine.reset_prefix_cache()
    for p in prompts:
        engine.add_request(p, SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True))
    times = []
    while engine.has_unfinished():
        t = time.perf_counter()
        engine.step()
        times.append(time.perf_counter() - t)
    return times


def projections_seconds(engine: LLMEngine, rows: int, runs: int = 3) -> tuple[float, float, int]:
    """Seconds of one call of every projection at `rows` rows (best of `runs` per projection), their FLOPs,
    and the weight bytes they read."""
    model = engine.runner.model
    linears = [m for m in model.modules() if isinstance(m, Linear)]
    total, flops, nbytes = 0.0, 0, 0
    with torch.inference_mode():
        for m in linears:
            x = torch.randn(rows, m.in_features).to(engine.config.torch_dtype)
            best = min(_timed(lambda m=m, x=x: m(x)) for _ in range(runs))
            total += best
            flops += 2 * rows * m.in_features * m.out_features
            nbytes += m.weight_bytes() if rows <= int8_blocks.max_rows() else m.in_features * m.out_features * 2
    return total, flops, nbytes


def _timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def print_quality(model: str | None, steps: int) -> None:
    """Mean KL and top-1 agreement of every int8 path this CPU runs against the dense engine, one engine at a time."""
    dense = LLM(model, quantization="none")
    continuations = [reference_continuation(dense, prompt, steps) for prompt in PROMPTS]
    label = f"dense {dense.config.torch_dtype}".replace("torch.", "")
    del dense
    paths = [q for q, ok in (("int8", int8_available()), ("int8_decode", bool(int8_blocks.kernel_choice().isa))) if ok]
    for quantization in paths:
        print(f"quality {quantization} against {label}: {compare(LLM(model, quantization=quantization), continuations)}; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inference.profile", description=__doc__)
    p.add_argument("--model", default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--quality", action="store_true", help="also compare the int8 paths' next-token distributions "
                   "with dense weights (inference.quality)")
    p.add_argument("--quality-steps", type=int, default=24, help="continuation tokens per prompt for --quality")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.quality:
        print_quality(args.model, args.quality_steps)
    engine = LLMEngine(Config(model=args.model, quantization="int8_decode", max_num_seqs=16))
    isa = int8_blocks.kernel_choice().isa
    limit = int8_blocks.MAX_ROWS[isa]
    rng = random.Random(0)

    def prompts(n: int, length: int) -> list[list[int]]:
        return [[rng.randrange(200, 150000) for _ in range(length)] for _ in range(n)]

    print(f"model {engine.loaded.name}, {torch.get_num_threads()} threads, int8 kernel {isa}, "
          f"load average {os.getloadavg()[0]:.1f}")
    step_times(engine, prompts(2, 64), 4)  # warm-up
    for r in range(args.rounds):
        dense = str(engine.config.torch_dtype).removeprefix("torch.")  # bf16 on CPUs with native bf16, else float32
        for label, rows_limit in (("int8", limit), (dense, 0)):
            int8_blocks.MAX_ROWS[isa] = rows_limit
            prefill = step_times(engine, prompts(1, 500), 1)[0]
            many = statistics.median(step_times(engine, prompts(16, 128), 24)[6:])  # 4-5 prefill steps first
            one = statistics.median(step_times(engine, prompts(1, 128), 24)[2:])
            proj16, flops16, bytes16 = projections_seconds(engine, 16)
            proj1, _, bytes1 = projections_seconds(engine, 1)
            print(f"round {r + 1} {label}: prefill {1000 * prefill / 500:.2f} ms/token; "
                  f"decode x16 {1000 * many:.0f} ms/step (projections {1000 * proj16:.0f} ms = {flops16 / proj16 / 1e9:.0f} "
                  f"GFLOP/s, {bytes16 / proj16 / 1e9:.1f} GB/s; outside them {1000 * (many - proj16):.0f} ms); "
                  f"decode x1 {1000 * one:.0f} ms/step (projections {1000 * proj1:.0f} ms, "
                  f"{bytes1 / proj1 / 1e9:.1f} GB/s; outside {1000 * (one - proj1):.0f} ms); "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
    int8_blocks.MAX_ROWS[isa] = limit
    model = engine.runner.model
    print(f"weights read per decode step: {model.weight_bytes_per_token() / 1e6:.0f} MB int8 blocks, "
          f"{sum(2 * m.in_features * m.out_features for m in model.modules() if isinstance(m, Linear)) / 1e6:.0f} MB bf16; "
          f"read bandwidth {read_bandwidth_gbs('cpu'):.1f} GB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

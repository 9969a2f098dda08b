"""`python -m benchmarks.advisor` (make bench-advisor): time per recommendation, warm, over a spread of realistic requests.

Run by hand or in CI's benchmark step (not in the test suite). Prints p50/p95/max milliseconds per
`recommend()` call after a warm-up pass, plus the same figures divided by an anchor measured in the
same run (a fixed pure-Python workload), so numbers from a busy machine can still be compared.
Target: p95 <= 300 ms warm.
"""
from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable
from typing import Any

from advisor.services import recommend
from advisor.simulate import percentile
from inference.timing import timings

GPUS = ["Tesla T4", "Tesla V100-SXM2-32GB", "NVIDIA A10G", "NVIDIA L4", "NVIDIA GeForce RTX 4090",
        "A100-SXM4-40GB", "A100 80GB", "NVIDIA H100 80GB HBM3", "NVIDIA L40S", "H200"]
MODELS = ["meta-llama/Llama-2-7b-hf", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
          "mistralai/Mixtral-8x7B-Instruct-v0.1", "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen3-30B-A3B",
          "google/gemma-2-9b-it", "deepseek-ai/DeepSeek-V2-Lite-Chat"]
WORKLOADS = [{"prompt_tokens": 512, "output_tokens": 128, "concurrency": 4},
             {"prompt_tokens": 2048, "output_tokens": 256, "concurrency": 32},
             {"prompt_tokens": 1024, "output_tokens": 512, "concurrency": 128}]


def requests(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """A fixed, varied set of advisor requests (GPU, count, model, engine or not, workload, SLA)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        raw: dict[str, Any] = {"gpu": rng.choice(GPUS), "gpu_count": rng.choice([1, 2, 4, 8]), "model": rng.choice(MODELS),
                               "workload": rng.choice(WORKLOADS)}
        if rng.random() < 0.5:
            raw["engine"] = "vllm"
        if rng.random() < 0.3:
            raw["sla"] = {"p95_latency_ms": rng.choice([2000, 10000, 60000])}
        out.append(raw)
    return out


def anchor_ms() -> float:
    """A fixed CPU-bound reference: sort 200k floats and round-trip a JSON document."""
    rng = random.Random(1)
    data = [rng.random() for _ in range(200_000)]
    return timings(lambda: (sorted(data), json.loads(json.dumps({"v": data[:50_000]}))), 1)[0] * 1e3


def time_calls(batch: Iterable[dict[str, Any]]) -> list[float]:
    """Milliseconds of one `recommend` call per request, in order."""
    return [timings(lambda r=raw: recommend(r), 1)[0] * 1e3 for raw in batch]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    batch = requests(args.requests)
    time_calls(batch)  # warm-up: catalogs loaded, caches filled
    anchors = [anchor_ms()]
    times: list[float] = []
    for _ in range(args.rounds):
        times += time_calls(batch)
        anchors.append(anchor_ms())
    anchor = sorted(anchors)[len(anchors) // 2]
    figures = {"calls": len(times), "p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95),
               "max_ms": max(times), "anchor_ms": anchor, "p95_over_anchor": percentile(times, 95) / anchor}
    emit(figures, args.json, [
        f"advisor.recommend warm over {figures['calls']} calls: p50 {figures['p50_ms']:.1f} ms, "
        f"p95 {figures['p95_ms']:.1f} ms, max {figures['max_ms']:.1f} ms (target p95 <= 300 ms)",
        f"anchor {anchor:.1f} ms; p95 = {figures['p95_over_anchor']:.2f} x anchor"])
    return figures


def emit(report: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    """Print a benchmark report as JSON or as the human-readable lines."""
    print(json.dumps(report, indent=2) if as_json else "\n".join(lines))


if __name__ == "__main__":
    main()

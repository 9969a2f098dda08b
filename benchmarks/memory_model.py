"""`python -m benchmarks.memory_model` (make bench-memory): the advisor's KV-cache sizing against real vLLM logs.

Run by hand or in CI's benchmark step (seconds). For each start-up log in benchmarks/data/vllm_startup_logs.json
it sizes the logged request with the advisor's own planner (same GPU, model, release, tensor parallelism,
memory fraction and context length) and compares the KV-cache tokens with what vLLM allocated, beside the
naive calculator "(total memory x gpu_memory_utilization - weights) / KV bytes per token". Median and
worst relative errors are printed per split (dev, held-out).
"""
from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.planner import enumerate_options
from advisor.sizing import GIB, kv_bytes_per_token, weight_bytes
from advisor.validation import parse_request

LOGS = Path(__file__).resolve().parent / "data" / "vllm_startup_logs.json"


@dataclass(frozen=True)
class Row:
    id: str
    split: str
    observed: int
    advisor: int
    naive: int

    def error(self, predicted: int) -> float:
        return abs(predicted - self.observed) / self.observed


def logs() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(LOGS.read_text(encoding="utf-8"))["logs"]
    return entries


def size(entry: dict[str, Any]) -> Row:
    """The advisor's and the naive KV-token figures for one logged start-up."""
    req = parse_request(entry["request"])
    tp = int(req.flags.get("tensor_parallel_size", 1))
    plan = enumerate_options(req)
    sizes = [o.plan for o in plan.options if o.tp == tp and o.pp == 1 and o.kv_dtype is None
             and (o.quant.method is None) == (req.model.quantization is None)]
    # a start-up vLLM refused (KV cache below one sequence) still logged its block count: use the near miss
    sizes += [p for label, p in plan.missed_sizes.items() if f"tp={tp} pp=1" in label and " kv " not in label]
    advisor = sizes[0].kv_tokens if sizes else 0
    bits = req.model.weight_bits if req.model.quantization else 16
    weights = weight_bytes(req.model, bits, req.model.quantization) / tp
    free = req.gpu.usable_gib * GIB * float(req.flags["gpu_memory_utilization"]) - weights
    naive = max(0, int(free // kv_bytes_per_token(req.model, 2.0, tp)))
    return Row(entry["id"], entry["split"], int(entry["kv_tokens"]), advisor, naive)


def report(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Median and worst relative error of the advisor and of the naive formula, per split and overall."""
    out: dict[str, dict[str, float]] = {}
    for split in ("dev", "heldout", "all"):
        chosen = [r for r in rows if split in ("all", r.split)]
        if not chosen:
            continue
        adv = [r.error(r.advisor) for r in chosen]
        naive = [r.error(r.naive) for r in chosen]
        out[split] = {"logs": float(len(chosen)), "advisor_median": statistics.median(adv), "advisor_worst": max(adv),
                      "naive_median": statistics.median(naive), "naive_worst": max(naive)}
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    rows = [size(e) for e in logs()]
    for r in rows:
        print(f"{r.id:32s} {r.split:8s} observed {r.observed:8d}  advisor {r.advisor:8d} ({r.error(r.advisor):6.1%})  "
              f"naive {r.naive:8d} ({r.error(r.naive):6.1%})")
    for split, figures in report(rows).items():
        print(f"{split:8s} n={figures['logs']:.0f}: advisor median {figures['advisor_median']:.1%} worst "
              f"{figures['advisor_worst']:.1%}; naive median {figures['naive_median']:.1%} worst {figures['naive_worst']:.1%}")


if __name__ == "__main__":
    main()

"""`python -m benchmarks.memory_model` (make bench-memory): the advisor's KV-cache sizing against real vLLM logs.

Run by hand or in CI's benchmark step (seconds). For each start-up log in benchmarks/data/vllm_startup_logs.json
it sizes the logged request with the advisor's own planner (same GPU, model, release, tensor parallelism,
memory fraction and context length) and compares the KV-cache tokens with what vLLM allocated, beside the
naive calculator "(total memory x gpu_memory_utilization - weights) / KV bytes per token" (per GPU, at the
logged KV-cache dtype). Median and
worst relative errors are printed per split (dev, held-out).
"""
from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.planner import KV_BYTES, enumerate_options
from advisor.sizing import GIB, kv_bytes_per_token, weight_bytes
from advisor.validation import parse_request
from advisor.versions import vkey

LOGS = Path(__file__).resolve().parent / "data" / "vllm_startup_logs.json"


@dataclass(frozen=True)
class Row:
    id: str
    split: str
    version: str
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
    pp = int(req.flags.get("pipeline_parallel_size", 1))
    kv = req.flags.get("kv_cache_dtype")
    kv = None if kv in (None, "auto") else str(kv)
    plan = enumerate_options(req)
    sizes = [o.plan for o in plan.options if o.tp == tp and o.pp == pp and o.kv_dtype == kv
             and (o.quant.method is None) == (req.model.quantization is None)]
    # a start-up vLLM refused (KV cache below one sequence) still logged its block count: use the near miss
    sizes += [p for label, p in plan.missed_sizes.items()
              if f"tp={tp} pp={pp}" in label and (" kv " in label) == (kv is not None)]
    advisor = sizes[0].kv_tokens if sizes else 0
    bits = req.model.weight_bits if req.model.quantization else 16
    weights = weight_bytes(req.model, bits, req.model.quantization) / (tp * pp)
    free = req.gpu.usable_gib * GIB * float(req.flags["gpu_memory_utilization"]) - weights
    naive = max(0, int(free // kv_bytes_per_token(req.model, KV_BYTES.get(kv, 1.0), tp, pp)))
    return Row(entry["id"], entry["split"], str(entry["request"]["engine_version"]), int(entry["kv_tokens"]), advisor, naive)


def _figures(chosen: list[Row]) -> dict[str, float]:
    adv = [r.error(r.advisor) for r in chosen]
    naive = [r.error(r.naive) for r in chosen]
    return {"logs": float(len(chosen)), "advisor_median": statistics.median(adv), "advisor_worst": max(adv),
            "naive_median": statistics.median(naive), "naive_worst": max(naive)}


def report(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Median and worst relative error of the advisor and of the naive formula, per split and overall."""
    out: dict[str, dict[str, float]] = {}
    for split in ("dev", "heldout", "all"):
        chosen = [r for r in rows if split in ("all", r.split)]
        if chosen:
            out[split] = _figures(chosen)
    return out


def by_version(rows: list[Row]) -> dict[str, dict[str, float]]:
    """The same figures per engine release the logs are sized at (both splits together)."""
    return {v: _figures([r for r in rows if r.version == v]) for v in sorted({r.version for r in rows}, key=vkey)}


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    rows = [size(e) for e in logs()]
    for r in rows:
        print(f"{r.id:44s} {r.split:8s} observed {r.observed:8d}  advisor {r.advisor:8d} ({r.error(r.advisor):6.1%})  "
              f"naive {r.naive:8d} ({r.error(r.naive):6.1%})")
    for label, figures in [*report(rows).items(), *((f"vllm {v}", f) for v, f in by_version(rows).items())]:
        print(f"{label:16s} n={figures['logs']:.0f}: advisor median {figures['advisor_median']:.1%} worst "
              f"{figures['advisor_worst']:.1%}; naive median {figures['naive_median']:.1%} worst {figures['naive_worst']:.1%}")


if __name__ == "__main__":
    main()

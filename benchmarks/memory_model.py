"""`python -m benchmarks.memory_model` (make bench-memory): the advisor's KV-cache sizing against measured capacities.

Run by hand or in CI's benchmark step (seconds). For each measurement in benchmarks/data/vllm_startup_logs.json it
sizes the logged request with the advisor's own planner (same GPU, model, release, tensor and pipeline parallelism,
memory fraction and context length) and compares the KV cache with what the engine allocated (vLLM mostly, two
SGLang starts; tokens, or GiB where the source gives GiB), beside two anchors from the same run:
- the naive calculator "(total memory x gpu_memory_utilization - weights) / KV bytes per token" (per GPU, at the
  logged KV-cache dtype);
- aiconfigurator-core's KV-cache estimator (a second opinion; optional: without the package the column is empty).
Its native model has no vLLM performance database for these GPUs, so it answers with its documented naive
fallback (a share of the memory left after its own weight estimate), fed the same model shape.

Measurements are split by `source` (a thread, or one model's runs in one repository) with a fixed seed, so runs that
share a source never sit on both sides; the memory model is tuned on `dev` only. Median and worst relative errors are
printed per split.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor import memory_accounting
from advisor.model_specs import ModelSpec
from advisor.planner import KV_BYTES, default_max_num_seqs, enumerate_options
from advisor.profiles import profile
from advisor.sizing import (
    GIB,
    activation_bytes,
    allreduce_inputs_bytes,
    kv_bytes_per_token,
    weight_bytes,
)
from advisor.validation import Request, parse_request
from advisor.versions import vkey

LOGS = Path(__file__).resolve().parent / "data" / "vllm_startup_logs.json"
SPLIT_SEED = "memory-split-2026"  # fixed: changing it re-deals the sources and voids the validation figures
VALIDATION_SHARE = 0.5


@dataclass(frozen=True)
class Row:
    id: str
    split: str
    version: str
    unit: str  # "tokens" or "GiB"
    observed: float
    advisor: float
    naive: float
    second: float | None  # aiconfigurator-core's estimate, when the package is installed

    def error(self, predicted: float) -> float:
        return abs(predicted - self.observed) / self.observed


def logs() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(LOGS.read_text(encoding="utf-8"))["logs"]
    return entries


def split_of(source: str) -> str:
    """dev or validation for every measurement of one source, from a hash of the source and the fixed seed."""
    digest = hashlib.sha256(f"{SPLIT_SEED}:{source}".encode()).digest()
    return "validation" if int.from_bytes(digest[:8], "big") / 2**64 < VALIDATION_SHARE else "dev"


def _hf_config(model: ModelSpec) -> dict[str, Any]:
    """The model shape as config.json keys, for aiconfigurator-core's estimator."""
    config: dict[str, Any] = {
        "architectures": [model.architecture], "hidden_size": model.hidden, "num_hidden_layers": model.layers,
        "num_attention_heads": model.heads, "num_key_value_heads": model.kv_heads, "head_dim": model.head_dim,
        "intermediate_size": model.intermediate, "vocab_size": model.vocab, "torch_dtype": model.dtype,
        "max_position_embeddings": model.max_context}
    if model.experts:
        config.update(num_experts=model.experts, num_experts_per_tok=model.experts_per_token,
                      moe_intermediate_size=model.intermediate)
    if model.uses_mla:
        config.update(kv_lora_rank=model.kv_lora_rank, qk_rope_head_dim=model.qk_rope_head_dim)
    return config


def second_opinion(model: ModelSpec, capacity_bytes: float, tp: int, pp: int) -> float | None:
    """aiconfigurator-core's KV estimate (bytes) for one GPU, or None without the package or when it declines."""
    try:
        from aiconfigurator_core.sdk.memory import NaiveKVCacheEstimator  # noqa: PLC0415 - optional, heavy import
    except ImportError:
        return None
    try:
        estimate = NaiveKVCacheEstimator.from_hf_config(_hf_config(model), tp_size=tp, pp_size=pp).estimate(
            capacity=int(capacity_bytes), naive_kv_reservation=0.8)  # the package's documented default reservation
    except ValueError:
        return None
    return float(estimate["total_kv_size_bytes"])


def layout(req: Request) -> tuple[int, int, str | None]:
    """The measured start-up's tensor- and pipeline-parallel sizes and KV dtype (None: the model's own)."""
    kv = req.flags.get("kv_cache_dtype")
    return (int(req.flags.get("tensor_parallel_size", 1)), int(req.flags.get("pipeline_parallel_size", 1)),
            None if kv in (None, "auto") else str(kv))


def size(entry: dict[str, Any]) -> Row:
    """The advisor's, the naive and the second-opinion KV figures for one measurement."""
    req = parse_request(entry["request"])
    tp, pp, kv = layout(req)
    plan = enumerate_options(req)
    sizes = [o.plan for o in plan.options if o.tp == tp and o.pp == pp and o.kv_dtype == kv
             and (o.quant.method is None) == (req.model.quantization is None)]
    # a start-up vLLM refused (KV cache below one sequence) still logged its block count: use the near miss
    sizes += [p for label, p in plan.missed_sizes.items()
              if f"tp={tp} pp={pp}" in label and (" kv " in label) == (kv is not None)]
    per_token = kv_bytes_per_token(req.model, KV_BYTES.get(kv, 1.0), tp, pp)
    bits = req.model.weight_bits if req.model.quantization else 16
    weights = weight_bytes(req.model, bits, req.model.quantization) / (tp * pp)
    free = req.gpu.usable_gib * GIB * float(req.flags["gpu_memory_utilization"]) - weights
    second = second_opinion(req.model, req.gpu.usable_gib * GIB, tp, pp)
    common = {"id": entry["id"], "split": split_of(entry["source"]),
              "version": f"{entry['request']['engine']} {entry['request']['engine_version']}"}
    if "kv_cache_gib" in entry:
        return Row(**common, unit="GiB", observed=float(entry["kv_cache_gib"]),
                   advisor=sizes[0].kv_cache_gib if sizes else 0.0, naive=max(0.0, free / GIB),
                   second=None if second is None else second / GIB)
    return Row(**common, unit="tokens", observed=float(entry["kv_tokens"]), advisor=float(sizes[0].kv_tokens if sizes else 0),
               naive=float(max(0, int(free // per_token))), second=None if second is None else float(int(second // per_token)))


def _dev_rows(engine: str, since: str) -> Iterator[tuple[dict[str, Any], Request, memory_accounting.Line]]:
    """The dev measurements of `engine` sized under its accounting line `since`, parsed; never validation."""
    for entry in logs():
        if split_of(entry["source"]) != "dev" or entry["request"].get("engine") != engine:
            continue
        acct = memory_accounting.line(engine, str(entry["request"]["engine_version"]))
        if acct.since == since:
            yield entry, parse_request(entry["request"]), acct


def _kept_back(entry: dict[str, Any], req: Request, acct: memory_accounting.Line) -> float:
    """Bytes one GPU kept back beyond the weights, the line's non-torch memory and the KV cache it allocated: what
    the profiled pass (and anything the line does not model) took."""
    tp, pp, kv = layout(req)
    bits = req.model.weight_bits if req.model.quantization else 16
    weights = weight_bytes(req.model, bits, req.model.quantization) / (tp * pp)
    observed = (float(entry["kv_cache_gib"]) * GIB if "kv_cache_gib" in entry
                else entry["kv_tokens"] * kv_bytes_per_token(req.model, KV_BYTES.get(kv, 1.0), tp, pp))
    budget = req.gpu.usable_gib * GIB * float(req.flags["gpu_memory_utilization"]) * acct.fraction_scale
    return budget - weights - observed - acct.non_torch_gib * GIB


def _profiled_seqs(req: Request, engine: str) -> int:
    return int(req.flags.get("max_num_seqs") or default_max_num_seqs(profile(engine), str(req.engine_version), req.gpu))


def fit(engine: str, since: str) -> dict[str, float]:
    """Least-squares activation_scale, multi_gpu_extra_gib and sampler_bytes_per_logit of one accounting line, from
    the dev measurements sized under it (non-torch memory as the line states it; no constant, which would not
    carry over to other GPUs and batch sizes). Never reads validation."""
    import numpy as np  # noqa: PLC0415 - only this maintenance path needs it

    rows, targets = [], []
    for entry, req, acct in _dev_rows(engine, since):
        tp, _, _ = layout(req)
        eng = profile(engine)
        seqs = _profiled_seqs(req, engine)
        tokens = int(req.flags.get("max_num_batched_tokens") or eng.default("max_num_batched_tokens", str(req.engine_version), req.gpu) or 2048)
        forward = activation_bytes(req.model, tokens, seqs, tp, acct.model_copy(
            update={"sampler_bytes_per_logit": 0.0, "activation_scale": 1.0}))
        logits = seqs * req.model.vocab / (tp if acct.logits_sharded else 1)
        rows.append([forward / GIB, 1.0 if tp > 1 else 0.0, logits / GIB])
        targets.append(_kept_back(entry, req, acct) / GIB)
    coef, *_ = np.linalg.lstsq(np.array(rows), np.array(targets), rcond=None)
    return {"measurements": float(len(rows)), "activation_scale": float(coef[0]), "multi_gpu_extra_gib": float(coef[1]),
            "sampler_bytes_per_logit": float(coef[2])}


def fit_allreduce_share(engine: str, since: str) -> dict[str, float]:
    """allreduce_held_share of one V0 accounting line (no chunked prefill: the profile batch is max(max_model_len,
    2048) tokens unless set), by least squares over its tensor-parallel dev measurements: what the profile kept back
    beyond the line's forward and sampler terms, against all the pass's all-reduce inputs. Never reads validation."""
    held, rest = [], []
    for entry, req, acct in _dev_rows(engine, since):
        tp, _, _ = layout(req)
        if tp == 1:
            continue
        tokens = int(req.flags.get("max_num_batched_tokens")
                     or max(int(req.flags.get("max_model_len") or req.model.max_context), 2048))
        others = activation_bytes(req.model, tokens, _profiled_seqs(req, engine), tp,
                                  acct.model_copy(update={"allreduce_held_share": 0.0}))
        held.append(allreduce_inputs_bytes(req.model, tokens))
        rest.append(_kept_back(entry, req, acct) - others)
    share = sum(h * r for h, r in zip(held, rest, strict=True)) / sum(h * h for h in held) if held else 0.0
    return {"measurements": float(len(held)), "allreduce_held_share": share}


def _figures(chosen: list[Row]) -> dict[str, float]:
    adv = [r.error(r.advisor) for r in chosen]
    naive = [r.error(r.naive) for r in chosen]
    out = {"logs": float(len(chosen)), "advisor_median": statistics.median(adv), "advisor_worst": max(adv),
           "naive_median": statistics.median(naive), "naive_worst": max(naive)}
    second = [r.error(r.second) for r in chosen if r.second is not None]
    if second:
        out.update(second_median=statistics.median(second), second_worst=max(second), second_logs=float(len(second)))
    return out


def report(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Median and worst relative error of the advisor and of the anchors, per split and overall."""
    out: dict[str, dict[str, float]] = {}
    for split in ("dev", "validation", "all"):
        chosen = [r for r in rows if split in ("all", r.split)]
        if chosen:
            out[split] = _figures(chosen)
    return out


def by_version(rows: list[Row]) -> dict[str, dict[str, float]]:
    """The same figures per engine release the measurements are sized at (both splits together)."""
    releases = sorted({r.version for r in rows}, key=lambda v: (v.split()[0], vkey(v.split()[1])))
    return {v: _figures([r for r in rows if r.version == v]) for v in releases}


def _line(label: str, f: dict[str, float]) -> str:
    text = (f"{label:16s} n={f['logs']:.0f}: advisor median {f['advisor_median']:.1%} worst {f['advisor_worst']:.1%}; "
            f"naive median {f['naive_median']:.1%} worst {f['naive_worst']:.1%}")
    if "second_median" in f:
        text += f"; aiconfigurator-core median {f['second_median']:.1%} worst {f['second_worst']:.1%}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fit", nargs=2, metavar=("ENGINE", "SINCE"),
                        help="print the least-squares terms of one memory-accounting line from the dev split, and stop")
    parser.add_argument("--fit-allreduce", nargs=2, metavar=("ENGINE", "SINCE"),
                        help="print the dev split's allreduce_held_share of one V0 accounting line, and stop")
    parser.add_argument("--split", choices=("dev", "validation", "all"), default="all",
                        help="print this split only (tune with --split dev: the validation figures are read once, at the end)")
    args = parser.parse_args()
    if args.fit or args.fit_allreduce:
        print(json.dumps(fit(*args.fit) if args.fit else fit_allreduce_share(*args.fit_allreduce), indent=1))
        return
    rows = [size(e) for e in logs() if args.split in ("all", split_of(e["source"]))]
    for r in rows:
        if args.split in ("all", r.split):
            second = f"{r.second:10.2f} ({r.error(r.second):6.1%})" if r.second is not None else " " * 19
            print(f"{r.id:44s} {r.split:10s} {r.unit:6s} observed {r.observed:10.2f}  advisor {r.advisor:10.2f} "
                  f"({r.error(r.advisor):6.1%})  naive {r.naive:10.2f} ({r.error(r.naive):6.1%})  aic {second}")
    for label, figures in [*report(rows).items(), *((f"{v} ({args.split})", f) for v, f in by_version(rows).items())]:
        print(_line(label, figures))


if __name__ == "__main__":
    main()

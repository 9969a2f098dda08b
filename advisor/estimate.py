"""Latency and throughput estimates for one configuration, and whether they meet the SLA.

Runs for the shortlisted configurations of each recommendation: builds the roofline step model for the
replica's GPUs and precision, runs the continuous-batching simulation on the request's workload (the
concurrency split evenly over replicas) and compares p95 figures with the SLA.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.perf import Efficiency, Hardware, StepModel
from advisor.planner import KV_BYTES, Option
from advisor.simulate import SimConfig, Simulator
from advisor.validation import Request

SLA_CHECKS = (("p95_ttft_ms", "ttft_p95_ms", "p95 TTFT"), ("p95_tpot_ms", "tpot_p95_ms", "p95 TPOT"),
              ("p95_latency_ms", "e2e_p95_ms", "p95 end-to-end latency"))


@dataclass(frozen=True)
class Estimate:
    metrics: dict[str, float]
    meets_sla: bool
    misses: tuple[str, ...]


def step_model(req: Request, opt: Option, eff: Efficiency | None = None) -> StepModel:
    """The per-iteration time model of one replica of `opt`."""
    precision = opt.quant.compute if opt.quant.compute != "fp16" else ("bf16" if opt.dtype == "bfloat16" else "fp16")
    hw = Hardware.from_gpu(req.gpu, precision, opt.tp, opt.pp)
    bits = opt.quant.bits if opt.quant.method else 16
    return StepModel(req.model, hw, bits, opt.quant.method, KV_BYTES.get(opt.kv_dtype, 1.0), eff or Efficiency())


def quick_throughput(req: Request, opt: Option) -> float:
    """Cheap pre-ranking score: steady-state decode tokens/s over all replicas at the workload's batch."""
    per_replica = math.ceil(req.workload.concurrency / opt.replicas)
    batch = max(1, min(per_replica, opt.plan.max_num_seqs))
    context = batch * (req.workload.prompt_tokens + req.workload.output_tokens / 2)
    step = step_model(req, opt).step_seconds(0, 0.0, batch, context)
    return batch / step * opt.replicas


def estimate(req: Request, opt: Option, eff: Efficiency | None = None) -> Estimate:
    """Simulate the workload on one replica and scale throughput by the replica count."""
    per_replica = math.ceil(req.workload.concurrency / opt.replicas)
    cfg = SimConfig(kv_tokens=opt.plan.kv_tokens, max_num_seqs=opt.plan.max_num_seqs,
                    batched_tokens=opt.plan.batched_tokens, chunked_prefill=opt.chunked_prefill)
    result = Simulator(step_model(req, opt, eff), cfg, req.workload.prompt_tokens, req.workload.output_tokens,
                       per_replica).run()
    metrics = result.summary()
    metrics["throughput_tok_s"] *= opt.replicas
    misses = []
    for sla_key, metric_key, label in SLA_CHECKS:
        limit = getattr(req.sla, sla_key)
        if limit is not None and metrics[metric_key] > limit:
            misses.append(f"{label} {metrics[metric_key]:.0f} ms > {limit:g} ms")
    floor = req.sla.min_throughput_tok_s
    if floor is not None and metrics["throughput_tok_s"] < floor:
        misses.append(f"throughput {metrics['throughput_tok_s']:.0f} tok/s < {floor:g} tok/s")
    if result.rejected:
        misses.append(f"{result.rejected} requests never fit the KV cache")
    return Estimate(metrics=metrics, meets_sla=not misses, misses=tuple(misses))

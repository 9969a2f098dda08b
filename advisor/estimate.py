"""Latency and throughput estimates for one configuration, and whether they meet the SLA.

Runs for the shortlisted configurations of each recommendation: builds the step model for the replica
(aiconfigurator-core's measured per-op latencies where its database covers the GPU, engine and model,
at its nearest release; else the roofline for the GPUs and precision), both corrected by the engine's
fitted constants (advisor/catalog/calibration.json), runs the continuous-batching simulation on the
request's workload (the concurrency split evenly over replicas, each request paying the engine's fitted
per-request cost) and compares steady-state p95 figures with the SLA.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.calibration import calibration
from advisor.perf import Efficiency, Hardware, StepModel, StepTimes
from advisor.planner import KV_BYTES, Option
from advisor.silicon import (
    SiliconStepModel,
    SiliconTarget,
    SiliconUnavailable,
    model_path_for,
    nearest_measured,
    nearest_version,
)
from advisor.simulate import SimConfig, SimResult, Simulator
from advisor.validation import Request

# Engines whose iterations carry whole prompts beside the decoding sequences even without chunked prefill:
# TensorRT-LLM's in-flight batching processes context-phase sequences together with generation-phase ones,
# within max_num_tokens (https://nvidia.github.io/TensorRT-LLM/features/paged-attention-ifb-scheduler.html)
IN_FLIGHT_MIXING = frozenset({"tensorrt-llm"})
SLA_CHECKS = (("p95_ttft_ms", "ttft_p95_ms", "p95 TTFT"), ("p95_tpot_ms", "tpot_p95_ms", "p95 TPOT"),
              ("p95_latency_ms", "e2e_p95_ms", "p95 end-to-end latency"))


@dataclass(frozen=True)
class SlaMiss:
    """One SLA term the simulated configuration fails: `term` is the request's SLA key."""

    term: str
    limit: float
    predicted: float

    @property
    def over_by(self) -> float:
        """How far past the target, as a fraction of it (0.25 = 25 % over; for a throughput floor, under)."""
        if self.term == "min_throughput_tok_s":
            return (self.limit - self.predicted) / self.limit
        return (self.predicted - self.limit) / self.limit


@dataclass(frozen=True)
class Estimate:
    metrics: dict[str, float]
    meets_sla: bool
    misses: tuple[str, ...]
    sla_misses: tuple[SlaMiss, ...] = ()
    other_misses: tuple[str, ...] = ()  # what fails besides the SLA terms (requests that never fit, overload)
    step_source: str = ""  # where the step times came from, in words (for the rationale)

    @property
    def shortfall(self) -> float:
        """The worst relative SLA miss (0 when every term is met): how close a missing option comes."""
        return max((m.over_by for m in self.sla_misses), default=0.0)


def step_model(req: Request, opt: Option, eff: Efficiency | None = None) -> StepModel:
    """The roofline per-iteration time model of one replica of `opt` (default: the engine's fitted
    efficiencies and per-step cost)."""
    precision = opt.quant.compute if opt.quant.compute != "fp16" else ("bf16" if opt.dtype == "bfloat16" else "fp16")
    hw = Hardware.from_gpu(req.gpu, precision, opt.tp, opt.pp)
    bits = opt.quant.bits if opt.quant.method else 16
    if eff is None:
        eff = calibration().engine(opt.engine, opt.version.version).roofline.efficiency()
    return StepModel(req.model, hw, bits, opt.quant.method, KV_BYTES.get(opt.kv_dtype, 1.0), eff)


# our weight-format names -> aiconfigurator's GEMM quant modes; a format not listed uses the roofline
SILICON_QUANT = {None: None, "fp8": "fp8", "awq": "int4_wo", "gptq": "int4_wo", "awq_marlin": "int4_wo",
                 "gptq_marlin": "int4_wo"}


def silicon_target(req: Request, opt: Option) -> SiliconTarget | None:
    """aiconfigurator's coordinates for `opt`, when its database covers the GPU, engine and model."""
    cal = calibration()
    system, backend = cal.systems.get(req.gpu.id), cal.backends.get(opt.engine)
    if system is None or backend is None or opt.quant.method not in SILICON_QUANT:
        return None
    version = nearest_version(system, backend, opt.version.version)
    model_path = model_path_for(req.model)
    if version is None or model_path is None:
        return None
    return SiliconTarget(system, backend, version, model_path, opt.tp, opt.pp,
                         gemm_quant=SILICON_QUANT[opt.quant.method], kv_quant="fp8" if opt.kv_dtype else None)


def step_times(req: Request, opt: Option) -> tuple[StepTimes, str]:
    """The step model the simulation uses for `opt`, and where its times come from, in words."""
    target = silicon_target(req, opt)
    found = nearest_measured(target) if target is not None else None
    if found is None:
        return step_model(req, opt), _roofline_source(req, opt)
    measured, changed = found
    fit = calibration().engine(opt.engine, opt.version.version).silicon
    release = (f"{measured.backend} {measured.version}" if measured.version == opt.version.version else
               f"{measured.backend} {measured.version}, the nearest release it measured to {opt.version.version}")
    return (SiliconStepModel(measured, fit.scale, fit.step_overhead_s, fit.per_seq_overhead_s, fit.prefill_scale,
                             fit.moe_floor_s(req.model)),
            f"step times from aiconfigurator-core's measured per-op latencies ({measured.system}, {release}"
            f"{'; ' + changed if changed else ''}), scaled by the fitted {fit.scale:g} (decode) and "
            f"{fit.prefill_scale:g} (prefill){_release_note(opt)}")


def _roofline_source(req: Request, opt: Option) -> str:
    return (f"step times from the roofline on {req.gpu.name} datasheet peaks with efficiencies fitted on "
            f"measured serving runs (aiconfigurator-core has no per-op data for this GPU, engine, model or "
            f"format){_release_note(opt)}")


def _release_note(opt: Option) -> str:
    """Where the release's own measured runs corrected the decode times, in words ('' where they did not)."""
    own = calibration().engine(opt.engine).releases.get(opt.version.version)
    if own is None:
        return ""
    return (f"; decode × {own.decode:g}, as {own.rows} measured runs of {opt.version.version} "
            f"({own.models} models) showed")


def quick_throughput(req: Request, opt: Option) -> float:
    """Cheap pre-ranking score: steady-state decode tokens/s over all replicas at the workload's batch."""
    per_replica = math.ceil(req.workload.concurrency / opt.replicas)
    batch = max(1, min(per_replica, opt.plan.max_num_seqs))
    context = batch * (req.workload.prompt_tokens + req.workload.output_tokens / 2)
    step = step_model(req, opt).step_seconds(0, 0.0, batch, context)
    return batch / step * opt.replicas


def arrival_model(req: Request, opt: Option) -> str:
    """The arrival process behind every percentile the answer reports, in words."""
    w = req.workload
    split = f" ({opt.replicas} replicas share it evenly)" if opt.replicas > 1 else ""
    if w.request_rate is not None:
        return f"open loop: Poisson arrivals at {w.request_rate:g} requests/s{split}"
    return (f"closed loop: {w.concurrency} concurrent users, each sending its next request when the last one "
            f"finishes, started out of step; steady-state percentiles{split}")


def estimate(req: Request, opt: Option) -> Estimate:
    """Simulate the workload on one replica and scale throughput by the replica count."""
    w = req.workload
    per_replica = math.ceil(w.concurrency / opt.replicas)
    cfg = SimConfig(kv_tokens=opt.plan.kv_tokens, max_num_seqs=opt.plan.max_num_seqs,
                    batched_tokens=opt.plan.batched_tokens, chunked_prefill=opt.chunked_prefill,
                    mixed_steps=opt.chunked_prefill or opt.engine in IN_FLIGHT_MIXING)
    rate = w.request_rate / opt.replicas if w.request_rate is not None else None
    step, source = step_times(req, opt)

    def simulate(times: StepTimes) -> SimResult:
        return Simulator(times, cfg, w.prompt_tokens, w.output_tokens, per_replica, request_rate=rate,
                         prefix_tokens=w.shared_prefix_tokens if opt.prefix_caching else 0,
                         request_overhead_s=calibration().engine(opt.engine, opt.version.version).frontend_s(per_replica),
                         stagger=True).run()
    try:
        result = simulate(step)
    except SiliconUnavailable:  # a table lacks a point this workload reaches: the roofline answers instead
        step, source = step_model(req, opt), _roofline_source(req, opt)
        result = simulate(step)
    metrics = result.summary()
    metrics["throughput_tok_s"] *= opt.replicas
    sla = req.sla
    attained, goodput = result.goodput(*(None if v is None else v / 1e3 for v in
                                         (sla.p95_ttft_ms, sla.p95_tpot_ms, sla.p95_latency_ms)))
    metrics["sla_attainment"] = attained
    metrics["goodput_tok_s"] = goodput * opt.replicas
    metrics["prefix_hit_rate"] = result.prefix_hits / len(result.served) if result.served else 0.0
    misses, sla_misses = [], []
    for sla_key, metric_key, label in SLA_CHECKS:
        limit = getattr(sla, sla_key)
        if limit is not None and metrics[metric_key] > limit:
            misses.append(f"{label} {metrics[metric_key]:.0f} ms > {limit:g} ms")
            sla_misses.append(SlaMiss(sla_key, limit, metrics[metric_key]))
    floor = sla.min_throughput_tok_s
    if floor is not None and metrics["throughput_tok_s"] < floor:
        misses.append(f"throughput {metrics['throughput_tok_s']:.0f} tok/s < {floor:g} tok/s")
        sla_misses.append(SlaMiss("min_throughput_tok_s", floor, metrics["throughput_tok_s"]))
    other = []
    if result.rejected:
        other.append(f"{result.rejected} requests never fit the KV cache")
    if rate is not None and result.makespan_s and len(result.served) / result.makespan_s < 0.9 * rate:
        other.append(f"arrivals ({rate:g}/s per replica) outpace what one replica serves "
                      f"({len(result.served) / result.makespan_s:.2f}/s): the queue and latencies grow without bound")
    misses += other
    return Estimate(metrics=metrics, meets_sla=not misses, misses=tuple(misses), sla_misses=tuple(sla_misses),
                    other_misses=tuple(other), step_source=source)

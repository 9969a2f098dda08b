"""The advisor's entry point: request in, recommendations out (the JSON contract in DESIGN.md).

Runs for `manage.py advise`, `POST /api/advisor/recommend` and the benchmarks. Pipeline: validate ->
enumerate configurations that pass the hard rules and fit in memory -> pre-rank cheaply -> simulate the
shortlist on the workload -> rank (meets SLA, least precision given up, fewest GPUs per replica,
throughput with p95 TTFT weighed in) -> render commands and attach evidence. Plain Python: no database needed (only `save_setup`
and `forget_setup`, a person's saved setup, touch a table, and import its model when called).
"""
from __future__ import annotations

import math
from typing import Any

from advisor import render
from advisor.estimate import Estimate, arrival_model, estimate, quick_throughput
from advisor.evidence import catalog_evidence, literature_evidence
from advisor.planner import KV_BYTES, Option, Plan, default_max_num_seqs, enumerate_options
from advisor.profiles import profile, profiles
from advisor.techniques import techniques_for_each
from advisor.validation import AdvisorInputError, Request, parse_request
from advisor.verdict import verdict
from advisor.versions import at_least

__all__ = ["AdvisorInputError", "forget_setup", "recommend", "save_setup"]

# How much a faster first token may weigh against throughput when two options are otherwise equal: the
# score is log(throughput) - TTFT_WEIGHT * log(p95 TTFT), so halving p95 TTFT is worth ~15 % throughput.
# Without it an engine 6x slower to answer wins on a 2 % throughput margin, which no user asked for.
TTFT_WEIGHT = 0.2
SHORTLIST = 8
MAX_RECOMMENDATIONS = 3
MAX_MISSES_SHOWN = 4


def _kv_short(req: Request, opt: Option) -> bool:
    """True when one replica's KV cache cannot hold its share of the concurrent requests."""
    share = -(-req.workload.concurrency // opt.replicas)
    return opt.plan.kv_tokens < share * (req.workload.prompt_tokens + req.workload.output_tokens)


def _prerank_key(req: Request, opt: Option) -> tuple[object, ...]:
    return (opt.quant.self_quantize, _kv_short(req, opt), _precision_cost(opt), opt.gpus_per_replica, -quick_throughput(req, opt),
            profile(opt.engine).rank)


def _shortlist(req: Request, options: list[Option]) -> list[Option]:
    """The options worth simulating: the best by the cheap pre-ranking and, when an SLA is set, the best
    option of every parallel layout too (a larger tensor-parallel group may be what meets it)."""
    ranked = sorted(options, key=lambda o: _prerank_key(req, o))
    chosen = ranked[:SHORTLIST]
    if req.sla.is_set():
        seen = {(o.tp, o.pp) for o in chosen}
        for opt in ranked[SHORTLIST:]:
            if (opt.tp, opt.pp) not in seen:
                seen.add((opt.tp, opt.pp))
                chosen.append(opt)
    return chosen


def _precision_cost(opt: Option) -> float:
    """Precision given up: weight quantization tier, plus half a tier for an FP8 KV cache."""
    return opt.quant.tier + (0.5 if opt.kv_dtype else 0.0)


def _rank_key(req: Request, opt: Option, est: Estimate) -> tuple[object, ...]:
    """Meets the SLA (else: misses it by the least); runs on weights someone publishes; holds the workload's concurrent requests in its KV
    cache (else requests queue); gives up the least precision; uses the fewest GPUs per replica (tensor
    parallelism only as far as memory needs it, replicas for the rest, as vLLM's distributed-serving
    guide advises); then the best service score (throughput, with time to first token weighed in)."""
    return (not est.meets_sla, round(est.shortfall, 2), opt.quant.self_quantize, _kv_short(req, opt), _precision_cost(opt), opt.gpus_per_replica,
            -round(_service_score(est), 3), profile(opt.engine).rank)


def _service_score(est: Estimate) -> float:
    """log(throughput) - TTFT_WEIGHT * log(p95 TTFT): higher is better; scale-free, so it compares a
    1.7 s first token with a 0.29 s one by their ratio, as a user feels them."""
    throughput, ttft_s = est.metrics["throughput_tok_s"], est.metrics["ttft_p95_ms"] / 1e3
    return math.log(max(throughput, 1e-9)) - TTFT_WEIGHT * math.log(max(ttft_s, 1e-6))


def _distinct(ranked: list[tuple[Option, Estimate]]) -> list[tuple[Option, Estimate]]:
    """Best configuration per (engine, weight format, KV cache width), so alternatives differ in kind: an
    FP8 KV cache spelt E4M3 or E5M2 holds as many tokens and simulates alike, so the better-ranked spelling
    stands for both instead of filling a second slot with the same numbers."""
    seen, out = set(), []
    for opt, est in ranked:
        key = (opt.engine, opt.quant.label, KV_BYTES.get(opt.kv_dtype, 1.0))
        if key not in seen:
            seen.add(key)
            out.append((opt, est))
    return out[:MAX_RECOMMENDATIONS]


def _below_default(req: Request, opt: Option) -> str:
    """Says when the KV cache, not the release's own default, sets the batch cap."""
    if "max_num_seqs" in req.flags:
        return ""
    default = default_max_num_seqs(profile(opt.engine), opt.version.version, req.gpu)
    if opt.plan.max_num_seqs >= default:
        return ""
    return f" (below {profile(opt.engine).name} {opt.version.version}'s default of {default} on {req.gpu.name})"


def _kv_capped(req: Request, opt: Option) -> str:
    """Why max_model_len is below the model's maximum when the KV pool is what caps it."""
    p = opt.plan
    wanted = min(req.model.max_context, req.max_context or req.model.max_context)
    if "max_model_len" in req.flags or p.max_model_len >= wanted or p.kv_tokens >= wanted:
        return ""
    return (f", lowered because the {p.kv_cache_gib:.2f} GiB KV pool holds {p.kv_tokens} tokens at "
            f"{p.kv_bytes_per_token / 1024:.0f} KiB/token, less than one {wanted}-token sequence")


def _rationale(req: Request, opt: Option, est: Estimate) -> list[str]:
    p = opt.plan
    lines = [
        f"{opt.dtype}{' with ' + str(opt.quant.label) + ' weights' if opt.quant.method else ''}: weights take "
        f"{p.weights_gib:.2f} GiB per GPU, activations ~{p.activation_gib:.2f} GiB, leaving {p.kv_cache_gib:.2f} GiB "
        f"of KV cache ({p.kv_tokens} tokens at {p.kv_bytes_per_token / 1024:.0f} KiB/token) within "
        f"{p.gpu_memory_utilization:g} x {req.gpu.usable_gib:.2f} GiB",
        f"max_model_len {p.max_model_len} (model maximum {req.model.max_context}{_kv_capped(req, opt)}); "
        f"max_num_seqs {p.max_num_seqs} keeps "
        f"that many {req.workload.prompt_tokens}+{req.workload.output_tokens}-token requests in the cache without preemption"
        + _below_default(req, opt),
        f"simulated ({arrival_model(req, opt)}): p95 TTFT {est.metrics['ttft_p95_ms']:.0f} ms, "
        f"p95 TPOT {est.metrics['tpot_p95_ms']:.1f} ms, p95 latency {est.metrics['e2e_p95_ms']:.0f} ms, "
        f"{est.metrics['throughput_tok_s']:.0f} output tok/s; {est.step_source}",
    ]
    if req.sla.is_set():
        lines.append(f"goodput: {est.metrics['sla_attainment']:.0%} of requests meet every latency target, "
                     f"{est.metrics['goodput_tok_s']:.0f} output tok/s from them")
    if opt.prefix_caching:
        lines.append(f"prefix caching: {est.metrics['prefix_hit_rate']:.0%} of requests reuse the "
                     f"{req.workload.shared_prefix_tokens}-token shared prefix and skip prefilling it")
    if opt.multi_lora:
        lines.append(f"serves {req.workload.lora_adapters} LoRA adapters; their memory and kernel cost are not in these "
                     f"estimates")
    if opt.quant.checkpoint_id:
        lines.append(f"serves the published {opt.quant.label} checkpoint {opt.quant.checkpoint_id} ({opt.quant.source})")
    elif opt.quant.self_quantize:
        tool = profile(opt.engine).quantize_tool
        lines.append(f"no published {opt.quant.label} checkpoint of {req.model.id} is known: quantize it first with {tool}")
    elif opt.quant.online_full_weights:
        lines.append(f"{opt.quant.label} is applied while loading; the {req.model.dtype} weights must fit first ({opt.quant.source})")
    if opt.kv_dtype:
        lines.append(f"{opt.kv_dtype} KV cache halves the cache per token at a small accuracy cost")
    mode = render.graph_mode(req, opt)
    graphs = profile(opt.engine).cuda_graphs
    if mode != "graphs" and graphs is not None and "enforce_eager" not in req.flags:
        moe = req.model.is_moe and graphs.moe_source
        why = (f"only {render.graph_headroom(req, opt):.2f} GiB is left outside gpu_memory_utilization, and CUDA graphs "
               f"take {graphs.extra_gib_min:g}-{graphs.extra_gib_max:g} GiB more per GPU ({graphs.source})"
               + (f"; a mixture-of-experts model's graphs take the upper {graphs.extra_gib_max:g} GiB "
                  f"({graphs.moe_source})" if moe else ""))
        if mode == "reduced" and graphs.reduced:
            lines.append(f"{graphs.reduced.key}={graphs.reduced.max_batch}: {why}; capturing batch sizes up to "
                         f"{graphs.reduced.max_batch} saves {graphs.reduced.saving_gib:g}+ GiB ({graphs.reduced.source})")
        else:
            lines.append(f"enforce_eager: {why}")
    note = render.replicas_note(opt)
    if note:
        lines.append(note)
    lines += list(opt.notes)
    lines += [f"misses SLA: {m}" for m in est.misses]
    return lines


def _recommendation(req: Request, opt: Option, est: Estimate, literature: list[dict[str, Any]]) -> dict[str, Any]:
    flags = render.engine_flags(req, opt)
    m = est.metrics
    return {
        "engine": opt.engine, "engine_version": opt.version.version, "install": render.install_line(opt),
        "dtype": opt.dtype, "quantization": opt.quant.label, "kv_cache_dtype": opt.kv_dtype,
        "tensor_parallel_size": opt.tp, "pipeline_parallel_size": opt.pp, "replicas": opt.replicas,
        "flags": flags, "command": render.command_line(req, opt, flags),
        "estimates": {
            "weights_gib": round(opt.plan.weights_gib, 2), "kv_cache_gib": round(opt.plan.kv_cache_gib, 2),
            "kv_tokens": opt.plan.kv_tokens, "activation_gib": round(opt.plan.activation_gib, 2),
            "ttft_p50_ms": round(m["ttft_p50_ms"], 1), "ttft_p95_ms": round(m["ttft_p95_ms"], 1),
            "tpot_p50_ms": round(m["tpot_p50_ms"], 2), "tpot_p95_ms": round(m["tpot_p95_ms"], 2),
            "latency_p50_ms": round(m["e2e_p50_ms"], 1), "latency_p95_ms": round(m["e2e_p95_ms"], 1),
            "throughput_tok_s": round(m["throughput_tok_s"], 1),
            "goodput_tok_s": round(m["goodput_tok_s"], 1), "sla_attainment": round(m["sla_attainment"], 3),
            "arrival_model": arrival_model(req, opt),
        },
        "meets_sla": est.meets_sla, "rationale": _rationale(req, opt, est),
        "evidence": catalog_evidence(req, opt) + literature,
        "verify": render.verify_line(req, opt),
    }


def _rejected(plan: Plan) -> list[dict[str, str]]:
    out = [r.as_dict() for r in plan.log.rejections.values()]
    for label, reason in plan.misses[:MAX_MISSES_SHOWN]:
        out.append({"option": label, "reason": reason, "source": "memory sizing (advisor.sizing)"})
    return out


def _nothing_fits_actions(req: Request, plan: Plan) -> list[str]:
    actions = []
    able = [eng.name for eid, eng in profiles().items()
            if at_least(req.gpu.compute_capability, eng.min_compute_capability) and eid != req.engine]
    if req.engine and req.engine in plan.log.rejections and able:
        actions.append(f"engines that support {req.gpu.name} (sm{req.gpu.compute_capability.replace('.', '')}): {', '.join(able)}")
    if req.model.quantization and req.model.base_id:
        actions.append(f"serve the base model {req.model.base_id} instead of this {req.model.quantization} checkpoint "
                       f"(other engines, or llama.cpp after GGUF conversion, can run it)")
    if plan.misses:
        actions.append(f"add GPUs (more than {req.gpu_count} x {req.gpu.name}), use a larger-memory GPU, "
                       f"or choose a smaller or pre-quantized model")
        if "gpu_memory_utilization" not in req.flags:
            actions.append("a higher gpu_memory_utilization may fit a tight setup, leaving less headroom for CUDA graphs "
                           "(add enforce_eager) and other processes")
    return actions


def _search(req: Request) -> tuple[Plan, list[tuple[Option, Estimate]]]:
    """Enumerate, shortlist, simulate and rank: the best distinct configurations for `req`."""
    plan = enumerate_options(req)
    shortlist = _shortlist(req, plan.options)
    ranked = sorted(((o, estimate(req, o)) for o in shortlist), key=lambda pair: _rank_key(req, *pair))
    return plan, _distinct(ranked)


def recommend(raw: dict[str, Any], *, any_path: bool = False) -> dict[str, Any]:
    """Answer one advisor request; raises AdvisorInputError for input a person must fix.

    `any_path`: see advisor.validation.parse_request (True for the CLI only)."""
    req = parse_request(raw, any_path=any_path)
    plan, chosen = _search(req)
    literature = literature_evidence(req, [opt for opt, _ in chosen]) if chosen else []
    recommendations = [_recommendation(req, opt, est, literature) for opt, est in chosen]
    for rec, techniques in zip(recommendations, techniques_for_each(req.normalised(), recommendations), strict=True):
        rec["techniques"] = techniques
    warnings = [*req.warnings, *plan.log.warnings]
    if req.cuda is None:
        warnings += sorted({f"driver CUDA version not given: {r['engine']} {r['engine_version']} wheels need a driver "
                            f"supporting CUDA >= {opt.version.cuda}" for (opt, _), r in zip(chosen, recommendations, strict=True)
                            if opt.version.cuda})
    actions = list(plan.log.actions)
    result = verdict(req, chosen, lambda changed: _search(changed)[1])
    if not recommendations:
        warnings.append("no configuration of the requested engine(s) runs this model on this hardware; see 'rejected'")
        actions += _nothing_fits_actions(req, plan)
    elif result["status"] == "misses_sla":
        warnings.append(result["summary"])
    return {
        "input": req.normalised(), "feasible": bool(recommendations), "verdict": result,
        "recommendations": recommendations, "rejected": _rejected(plan), "actions": actions, "warnings": warnings,
    }


def save_setup(user: Any, setup: dict[str, Any]) -> None:
    """Keep a signed-in person's setup (GPU, CUDA, model...) with their account, replacing the last one."""
    from advisor.models import SavedSetup

    SavedSetup.objects.update_or_create(user=user, defaults={"setup": setup})


def forget_setup(user: Any) -> None:
    """Drop the setup a signed-in person saved."""
    from advisor.models import SavedSetup

    SavedSetup.objects.filter(user=user).delete()

"""The answer's verdict: does the best configuration meet the SLA, and if not, by how much and what would.

Runs once per recommendation, after ranking. When no configuration meets the SLA the verdict names
each failing SLA term of the closest configuration with the predicted figure and how far past the
target it is, and tries the changes an operator can make — more GPUs, fewer concurrent requests (or a
lower arrival rate), shorter prompts — by re-running the advisor's own search (more GPUs, on the closest
configuration's engine and release) or simulation (the same configuration under less load), a handful
of bounded re-runs, and reports only the changes that the simulation says would meet it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from advisor.estimate import Estimate, SlaMiss, estimate
from advisor.planner import Option
from advisor.validation import Request

Search = Callable[[Request], list[tuple[Option, Estimate]]]

LABELS = {"p95_ttft_ms": ("p95 time to first token", "ms"), "p95_tpot_ms": ("p95 time per output token", "ms"),
          "p95_latency_ms": ("p95 end-to-end latency", "ms"), "min_throughput_tok_s": ("throughput", "tok/s")}
MAX_GPUS = 64
GPU_STEPS = 2  # try 2x and 4x the GPUs
LOAD_STEPS = 4  # halve the load up to four times


def _miss(m: SlaMiss) -> dict[str, Any]:
    label, unit = LABELS[m.term]
    direction = "under" if m.term == "min_throughput_tok_s" else "over"
    return {"term": m.term, "limit": m.limit, "predicted": round(m.predicted, 1), "over_by_pct": round(100 * m.over_by, 1),
            "text": f"{label} {m.predicted:.1f} {unit} is {100 * m.over_by:.0f}% {direction} the {m.limit:g} {unit} target"}


def _meets(search: Search, req: Request) -> tuple[Option, Estimate] | None:
    found = search(req)
    return found[0] if found and found[0][1].meets_sla else None


def _describe(opt: Option) -> str:
    quant = opt.quant.label or opt.dtype
    return f"{opt.engine} {opt.version.version} {quant}, tensor parallel {opt.tp}"


def _more_gpus(req: Request, search: Search) -> str | None:
    count = req.gpu_count
    for _ in range(GPU_STEPS):
        count *= 2
        if count > MAX_GPUS:
            return None
        hit = _meets(search, replace(req, gpu_count=count, warnings=[]))
        if hit:
            return f"{count} x {req.gpu.name} would meet it ({_describe(hit[0])})"
    return None


def _less_load(req: Request, opt: Option) -> str | None:
    w = req.workload
    for step in range(1, LOAD_STEPS + 1):
        if w.request_rate is not None:
            changed = replace(w, request_rate=w.request_rate / 2**step)
            what = f"an arrival rate of {changed.request_rate:g} requests/s"
        else:
            users = w.concurrency // 2**step
            if users < 1:
                return None
            changed = replace(w, concurrency=users)
            what = f"at most {users} concurrent requests"
        if estimate(replace(req, workload=changed), opt).meets_sla:
            return f"{what} would meet it with the same configuration ({_describe(opt)})"
    return None


def _shorter_prompts(req: Request, opt: Option) -> str | None:
    w = req.workload
    prompt = w.prompt_tokens
    for _ in range(LOAD_STEPS):
        prompt //= 2
        if prompt < max(64, w.shared_prefix_tokens):
            return None
        if estimate(replace(req, workload=replace(w, prompt_tokens=prompt)), opt).meets_sla:
            return f"prompts of at most {prompt} tokens would meet it with the same configuration ({_describe(opt)})"
    return None


def verdict(req: Request, chosen: list[tuple[Option, Estimate]], search: Search) -> dict[str, Any]:
    """{"status", "summary", "failing", "would_meet"} for the ranked configurations in `chosen`."""
    if not chosen:
        return {"status": "infeasible", "summary": "no configuration runs this model on this hardware",
                "failing": [], "would_meet": []}
    best_opt, best = chosen[0]
    if not req.sla.is_set():
        return {"status": "no_sla", "summary": "a setup that runs was found; no SLA was given to check it against",
                "failing": [], "would_meet": []}
    if best.meets_sla:
        return {"status": "meets_sla", "summary": "the best configuration meets every SLA term in the simulation",
                "failing": [], "would_meet": []}
    failing = [_miss(m) for m in best.sla_misses]
    reasons = "; ".join([f["text"] for f in failing] + list(best.other_misses))
    # the changes are tried on the closest configuration's engine and release, which keeps the re-runs cheap
    pinned = replace(req, engine=best_opt.engine, engine_version=best_opt.version.version)
    would = [found for found in (_more_gpus(pinned, search), _less_load(req, best_opt), _shorter_prompts(req, best_opt))
             if found]
    if not would:
        would = ["none of the changes tried (up to 4x the GPUs, an eighth of the load, shorter prompts) meets it: "
                 "relax the SLA or choose a smaller model"]
    return {"status": "misses_sla",
            "summary": f"no configuration meets the SLA; the closest, {_describe(best_opt)}, misses it: {reasons}",
            "failing": failing, "would_meet": would}

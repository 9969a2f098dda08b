"""Which serving techniques a recommendation turns on or leaves off, why for this workload, and what papers measured.

Runs once per recommendation (advisor.services attaches the result as `techniques`). Each decision
reads the normalised request (workload, SLA, GPUs) and the recommendation (engine, version, flags,
parallel layout); the switch comes from the engine profile (advisor.profiles), and the evidence is
the paper facts linked to the technique (ontology.selectors.technique_facts), the ones measured
closest to the request first: same GPU class, similar model size, similar prompt/output lengths.
Without a database the decisions still come, with empty evidence.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor import profiles
from ontology.selectors import EVALUATES_MIN_FACTS

log = logging.getLogger(__name__)

# A prompt this long takes a prefill step of the same order as many decode steps, so batching it
# whole stalls every running decode (the decode-stall argument of chunked-prefill papers).
LONG_PROMPT_TOKENS = 1024
# At this many concurrent streams decoding is no longer latency-bound: the batch already fills the
# GPU's compute, so draft tokens cost verification work that a full batch cannot absorb.
SPECULATION_MAX_CONCURRENCY = 8
# Disaggregation pays for a KV-cache transfer between GPU pools; it is worth a look only with
# enough GPUs to split into pools and enough load for prefill and decode to interfere.
DISAGGREGATION_MIN_GPUS = 2
DISAGGREGATION_MIN_CONCURRENCY = 16
EVIDENCE_PER_TECHNIQUE = 2


@dataclass(frozen=True)
class Decision:
    name: str
    enabled: bool
    why: str
    suggested: bool = False
    configured: bool = False  # the recommendation itself already does this (its dtype, layout, flags)


@dataclass(frozen=True)
class Switch:
    """How the recommended engine release offers a technique."""

    available: bool
    flag: str | None
    since: str | None
    on_by_default: bool


def _switch(engine: str, version: str | None, name: str) -> Switch:
    eid = profiles.engine_id(engine)
    entry = profiles.profile(eid).technique(name, version) if eid else None
    if eid is None or entry is None:
        newest = profiles.profile(eid).technique(name, None) if eid else None
        return Switch(False, None, newest.since if newest else None, False)
    on = profiles.profile(eid).technique_on(name, version) if version else entry.flag is None
    return Switch(True, entry.flag, entry.since, on)


def _sla_text(sla: dict[str, Any], key: str, label: str) -> str:
    return f"a p95 {label} SLA of {sla[key]:g} ms" if sla.get(key) else ""


def _decisions(inp: dict[str, Any], rec: dict[str, Any]) -> list[Decision]:
    """The workload reasoning, one decision per technique it has something to say about."""
    w, sla, flags = inp["workload"], inp.get("sla") or {}, rec.get("flags") or {}
    prompt, conc = w["prompt_tokens"], w["concurrency"]
    shared = w.get("shared_prefix_tokens") or 0
    adapters = w.get("lora_adapters") or 0
    tpot = _sla_text(sla, "p95_tpot_ms", "TPOT")
    ttft = _sla_text(sla, "p95_ttft_ms", "TTFT")
    out: list[Decision] = []

    if prompt >= LONG_PROMPT_TOKENS and conc > 1 and (tpot or sla.get("p95_latency_ms")):
        out.append(Decision("chunked_prefill", True,
                            f"{prompt}-token prompts with {conc} concurrent streams and {tpot or 'a latency SLA'}: "
                            f"a whole prompt's prefill in one step would stall every running decode; chunks under a "
                            f"per-step token budget keep time between tokens bounded"))
    elif conc == 1:
        out.append(Decision("chunked_prefill", False,
                            "one stream at a time: no running decodes for a long prefill to stall"))
    else:
        out.append(Decision("chunked_prefill", False,
                            f"{prompt}-token prompts are short next to a decode step's budget, so prefills do not "
                            f"stall decodes noticeably"))

    if shared > 0:
        out.append(Decision("prefix_caching", True,
                            f"{shared} of each request's {prompt} prompt tokens are shared: cache hits skip their "
                            f"prefill, cutting TTFT and prefill work"))
    else:
        out.append(Decision("prefix_caching", False,
                            "no shared prefix declared (workload.shared_prefix_tokens): nothing to reuse across requests"))

    if conc == 1 and (tpot or sla.get("p95_latency_ms")):
        out.append(Decision("speculative_decoding", False,
                            "suggestion: one latency-bound stream leaves the GPU's compute idle while decoding, so a "
                            "draft model's tokens verified in one pass lower time per output token (needs a draft "
                            "model of the same tokenizer)", suggested=True))
    elif conc >= SPECULATION_MAX_CONCURRENCY:
        out.append(Decision("speculative_decoding", False,
                            f"keep it off: {conc} concurrent streams already fill the GPU, and verifying draft tokens "
                            f"adds work a full batch cannot hide (papers report the gain shrinking with batch size)"))

    if adapters > 0:
        out.append(Decision("multi_lora", True,
                            f"{adapters} LoRA adapters over one base model: batch requests of different adapters "
                            f"together instead of one deployment per adapter"))

    gpus = inp.get("gpu_count") or 1
    if ttft and tpot and gpus >= DISAGGREGATION_MIN_GPUS and conc >= DISAGGREGATION_MIN_CONCURRENCY:
        out.append(Decision("prefill_decode_disaggregation", False,
                            f"suggestion: with {ttft} and {tpot} at {conc} concurrent streams on {gpus} GPUs, separate "
                            f"prefill and decode pools let each meet its own SLA (at the cost of a KV-cache transfer)",
                            suggested=True))

    if rec.get("kv_cache_dtype"):
        out.append(Decision("kv_cache_quantization", True,
                            f"{rec['kv_cache_dtype']} KV cache: half the bytes per token, so more requests fit", configured=True))
    if rec.get("quantization"):
        out.append(Decision("weight_quantization", True, f"{rec['quantization']} weights make the model fit and "
                                                         f"cut the bytes each decode step reads", configured=True))
    if flags.get("enforce_eager"):
        out.append(Decision("cuda_graphs", False,
                            "keep it off: the memory outside gpu_memory_utilization cannot hold the captured graphs "
                            "(enforce_eager is set)", configured=True))
    tp, pp = rec.get("tensor_parallel_size") or 1, rec.get("pipeline_parallel_size") or 1
    if tp > 1:
        out.append(Decision("tensor_parallelism", True, f"the model is split over {tp} GPUs per replica", configured=True))
    if pp > 1:
        out.append(Decision("pipeline_parallelism", True, f"layers run in {pp} pipeline stages", configured=True))
    return out


_SIZE = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d)?)\s?B\b")
_TOKENS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?([kK])?\s?(?:-?\s?tokens?\b|(?=\s?(?:prompt|context|input|sequence)))")
_GPU_NAME = re.compile(r"\b([AHBLTV])(\d{1,3})\b")


def _closeness(a: float, b: float, spread: float) -> float:
    """1 for equal positive numbers, falling to 0 when they differ by the factor `spread`."""
    return max(0.0, 1.0 - abs(math.log(a / b)) / math.log(spread)) if a > 0 and b > 0 else 0.0


def _gpu_score(request_gpu: str, row: dict[str, Any]) -> float:
    """Same GPU model 1; same generation (letter) 0.6; another GPU 0.3; unknown 0."""
    want = _GPU_NAME.search(request_gpu.upper())
    env_models = list((row.get("environment") or {}).get("gpu_models") or [])
    seen = list(_traits(row["quote"]).gpus) or env_models
    if not want or not seen:
        return 0.0
    if want.group(0) in seen:
        return 1.0
    return 0.6 if any(s[0] == want.group(1) for s in seen) else 0.3


def _best(values: list[float], target: float, spread: float) -> float:
    return max((_closeness(v, target, spread) for v in values), default=0.0)


_NUMBERISH = re.compile(r"[\d.,%×x()-]+[KkMmGgBs%]?")
AXIS_RUN = 5  # this many number-like tokens in a row are a figure's axis labels or a table row, not prose
# A figure's or sub-figure's caption ("(a) Mistral-7B on one A100 ...", "Figure 3: ...") names the setup
# a plot was measured on, not what was found; findings rank above it (by CAPTION_PENALTY).
_CAPTION = re.compile(r"\s*(?:\([a-h]\)\s|(?:fig(?:ure)?|table)\.?\s*\d+\s*[:.])", re.IGNORECASE)
CAPTION_PENALTY = 3.0  # the most closeness (GPU, model size, prompt length) can add


def _readable(quote: str) -> bool:
    """Prose, not a figure's axis labels or a table's cell soup."""
    tokens = quote.split()
    flags = [bool(_NUMBERISH.fullmatch(t)) for t in tokens]
    run = longest = 0
    for numeric in flags:
        run = run + 1 if numeric else 0
        longest = max(longest, run)
    return len(tokens) >= 6 and sum(flags) / len(tokens) < 0.3 and longest < AXIS_RUN


@dataclass(frozen=True)
class _QuoteTraits:
    """What ranking reads from a quote's text alone; cached, since every request ranks the same linked facts."""

    sizes: tuple[float, ...]  # model sizes in billions ("13B")
    lengths: tuple[float, ...]  # token counts ("2K tokens", "512 prompt")
    gpus: tuple[str, ...]  # GPU model names ("A100")
    caption: bool
    readable: bool


@lru_cache(maxsize=65536)
def _traits(quote: str) -> _QuoteTraits:
    return _QuoteTraits(sizes=tuple(float(m) for m in _SIZE.findall(quote)),
                        lengths=tuple(float(n) * (1024 if k else 1) for n, k in _TOKENS.findall(quote)),
                        gpus=tuple(m.group(0) for m in _GPU_NAME.finditer(quote)),
                        caption=bool(_CAPTION.match(quote)), readable=_readable(quote))


def _model_size_b(rec: dict[str, Any]) -> float | None:
    """The served model's size in billions of parameters, from the weights the advisor sized."""
    weights = (rec.get("estimates") or {}).get("weights_gib")
    if not weights:
        return None
    label = f"{rec.get('quantization') or ''} {rec.get('dtype') or ''}".lower()
    bytes_per = 0.5 if re.search(r"awq|gptq|int4|4.?bit|q4", label) else 1.0 if re.search(r"fp8|int8|8.?bit", label) else 2.0
    return float(weights) * (1 << 30) * (rec.get("tensor_parallel_size") or 1) * (rec.get("pipeline_parallel_size") or 1) / bytes_per / 1e9


def rank_evidence(rows: list[dict[str, Any]], inp: dict[str, Any], rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Facts of papers that evaluate the technique, the ones measured closest to the request first."""
    named: dict[str, int] = {}
    for row in rows:
        if row["names_technique"]:
            named[row["paper"]] = named.get(row["paper"], 0) + 1
    w = inp["workload"]
    size = _model_size_b(rec)

    def score(row: dict[str, Any]) -> float:
        traits = _traits(row["quote"])
        sizes = list(traits.sizes)
        if row["parameter"] == "model_size_b" and row.get("value_num"):
            sizes.append(row["value_num"])
        lengths = list(traits.lengths)
        return float(2.0 * row["names_technique"] + 0.5 * row["verified"] + 0.5 * (row["kind"] == "trade_off")
                + _gpu_score(str(inp.get("gpu") or ""), row)
                + (_best(sizes, size, 30.0) if size else 0.0)
                + max(_best(lengths, w["prompt_tokens"], 16.0), _best(lengths, w["output_tokens"], 16.0))
                - CAPTION_PENALTY * traits.caption)

    candidates = [r for r in rows if named.get(r["paper"], 0) >= EVALUATES_MIN_FACTS and _traits(r["quote"]).readable]
    return sorted(candidates, key=lambda r: (-score(r), r["paper"], r["page"] or 0, r["fact_id"]))


def _evidence(rows: list[dict[str, Any]], inp: dict[str, Any], rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The closest facts, at most one per paper, so the evidence shows what different papers measured."""
    out, papers = [], set()
    for row in rank_evidence(rows, inp, rec):
        if row["paper"] not in papers:
            papers.add(row["paper"])
            out.append({"paper": row["paper"], "page": row["page"], "quote": row["quote"]})
        if len(out) == EVIDENCE_PER_TECHNIQUE:
            break
    return out


def _linked_facts(names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Facts linked to each technique, when the ontology and its database answer; else none."""
    try:
        from django.db import connection  # noqa: PLC0415 - optional: the core advisor runs without Django

        from ontology.selectors import technique_facts  # noqa: PLC0415

        connection.ensure_connection()
        rows = technique_facts(names)
    except Exception as exc:  # noqa: BLE001 - no database: decisions without evidence
        log.info("technique evidence unavailable: %s", exc)
        return {}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["technique"], []).append(row)
    return grouped


def _with_switch(decision: Decision, rec: dict[str, Any]) -> tuple[bool, str | None, str]:
    """The decision as this engine release can carry it out: enabled, flag to set, and why."""
    engine, version = rec.get("engine") or "", rec.get("engine_version")
    switch = _switch(engine, version, decision.name)
    if decision.configured:
        return decision.enabled, switch.flag, decision.why
    if not switch.available:
        if not decision.enabled:
            return False, None, decision.why
        since = f" ({engine} added it in {switch.since})" if switch.since else ""
        return False, None, f"{decision.why} — but the {engine} {version} profile names no switch for it{since}"
    if not decision.enabled or not switch.flag:
        return decision.enabled, switch.flag, decision.why + (" (on by default)" if decision.enabled else "")
    fixed = (rec.get("flags") or {}).get(switch.flag.lstrip("-").replace("-", "_"))
    if fixed is False:
        return False, switch.flag, f"{decision.why} — but {switch.flag} is set off in this configuration"
    if fixed is None and not switch.on_by_default:
        return True, switch.flag, f"{decision.why} — set {switch.flag} (since {engine} {switch.since or 'its first release'})"
    return True, switch.flag, decision.why + (" (on by default in this release)" if fixed is None else "")


def techniques_for(normalised_input: dict[str, Any], recommendation: dict[str, Any]) -> list[dict[str, Any]]:
    """`[{"name", "enabled", "flag", "why", "evidence": [{"paper", "page", "quote"}]}]` for one recommendation
    (plus `"suggested": true` where the workload points at a technique this configuration leaves to the user)."""
    return techniques_for_each(normalised_input, [recommendation])[0]


def techniques_for_each(normalised_input: dict[str, Any], recommendations: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """`techniques_for` of every recommendation of one request, reading the linked facts once for all of them
    (the options of a request mostly share their techniques)."""
    decisions = [_decisions(normalised_input, rec) for rec in recommendations]
    facts = _linked_facts(sorted({d.name for each in decisions for d in each}))
    answers = []
    for rec, decided in zip(recommendations, decisions, strict=True):
        out = []
        for decision in decided:
            enabled, flag, why = _with_switch(decision, rec)
            item = {"name": decision.name, "enabled": enabled, "flag": flag, "why": why,
                    "evidence": _evidence(facts.get(decision.name, []), normalised_input, rec)}
            if decision.suggested:
                item["suggested"] = True
            out.append(item)
        answers.append(out)
    return answers

"""Enumerates the configurations that pass the hard rules and fit in memory.

Runs once per recommendation, between validation and simulation: engine -> release (newest the driver,
GPU and model allow, or the requested one) -> dtype -> weight quantization -> KV dtype -> parallel
layout, each step filtered by `advisor.rules`, then sized by `advisor.sizing`. User-fixed flags narrow
the choices instead of being overridden; when one of them is what makes a setup impossible, the
sizing reason names it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor import rules
from advisor.catalog import engines
from advisor.rules import QuantChoice, RuleLog, VersionChoice
from advisor.sizing import MemoryPlan, plan_memory
from advisor.validation import Request
from advisor.versions import at_least

ENGINE_ORDER = ("vllm", "sglang", "tensorrt-llm", "tgi", "llama.cpp")
CHUNK_TOKENS = 2048  # prompt-chunk budget per step when the engine supports chunked prefill
KV_BYTES = {None: 2.0, "fp8": 1.0, "fp8_e5m2": 1.0, "fp8_e4m3": 1.0}


@dataclass(frozen=True)
class Option:
    """One runnable configuration (a replica layout replicated over the GPUs) and its memory plan."""

    engine: str
    version: VersionChoice
    dtype: str
    quant: QuantChoice
    kv_dtype: str | None
    tp: int
    pp: int
    replicas: int
    plan: MemoryPlan
    chunked_prefill: bool
    env: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        quant = self.quant.label or self.dtype
        kv = f", kv {self.kv_dtype}" if self.kv_dtype else ""
        return f"{self.engine} {self.version.version} {quant}{kv} tp={self.tp} pp={self.pp}"


@dataclass
class Plan:
    """Everything enumeration produced: fitting options, near misses, and the rule log."""

    options: list[Option]
    misses: list[tuple[str, str]]
    log: RuleLog


def _lengths(req: Request) -> tuple[int, int, int | None]:
    """(wanted, required, fixed) context lengths for the sizing."""
    needed = req.workload.prompt_tokens + req.workload.output_tokens
    fixed = req.flags.get("max_model_len")
    wanted = min(req.model.max_context, req.max_context or req.model.max_context)
    required = max(needed, req.max_context or 0)
    return wanted, required, fixed


def _utilization(eng: dict[str, Any], flags: dict[str, Any]) -> float:
    """The user's memory fraction, else the engine default — never raised on the user's behalf."""
    if "gpu_memory_utilization" in flags:
        return float(flags["gpu_memory_utilization"])
    defaults = eng.get("defaults", {})
    for key in ("gpu_memory_utilization", "mem_fraction_static", "kv_cache_free_gpu_memory_fraction"):
        if key in defaults:
            return float(defaults[key])
    return 0.95 if eng["name"] == "llama.cpp" else 0.9


def _chunked(eid: str, eng: dict[str, Any], version: str) -> bool:
    since = eng.get("chunked_prefill_since")
    if eid == "vllm":
        return bool(since) and at_least(version, since)
    return eid in ("sglang", "tensorrt-llm", "tgi")


TIGHT_UTILIZATION = 0.95  # the most the advisor will suggest; vLLM warns CUDA graphs need 1-3 GiB outside it


def _size(req: Request, eid: str, eng: dict[str, Any], quant: QuantChoice, kv: str | None, tp: int, pp: int,
          chunked: bool, bits: float, utilization: float | None = None) -> MemoryPlan:
    wanted, required, fixed = _lengths(req)
    if req.model.max_context < required:
        required = req.model.max_context
    seqs = int(req.flags.get("max_num_seqs") or eng.get("defaults", {}).get("max_num_seqs", 256))
    batched = int(req.flags.get("max_num_batched_tokens") or CHUNK_TOKENS) if chunked else None
    return plan_memory(
        req.model, req.gpu, bits=bits, method=quant.method, kv_bytes=KV_BYTES.get(kv, 1.0), tp=tp, pp=pp,
        utilization=utilization or _utilization(eng, req.flags), wanted_len=wanted, required_len=required, fixed_len=fixed,
        max_num_seqs=seqs, batched_tokens=batched, fraction_of_free="kv_cache_free_gpu_memory_fraction" in eng.get("defaults", {}))


def _engine_options(req: Request, eid: str, plan: Plan) -> None:
    eng, log = engines()[eid], plan.log
    if not rules.engine_supports_gpu(eid, eng, req.gpu, log):
        return
    version = rules.choose_version(eid, eng, req, log)
    if version is None:
        return
    env, notes = rules.attention_env(eid, eng, version.version, req.gpu, req.model)
    chunked = _chunked(eid, eng, version.version)
    seen: set[tuple] = set()
    for model_dtype in rules.dtype_choices(eid, eng, req.gpu, req.model, req.flags, log):
        for quant in rules.quant_choices(eid, eng, version.version, req.gpu, req.model, req.flags, log):
            dtype = rules.quant_dtype(model_dtype, quant, log)
            if (dtype, quant) in seen:
                continue
            seen.add((dtype, quant))
            for kv in rules.kv_choices(eid, eng, version.version, req.gpu, req.flags, log):
                for tp, pp in rules.layouts(eid, eng, req.model, req.gpu_count, quant, req.flags, log):
                    if quant.online_full_weights:
                        full = _size(req, eid, eng, QuantChoice(None, None, 16, "fp16"), kv, tp, pp, chunked, 16)
                        if full.weights_gib + full.activation_gib > full.budget_gib:
                            log.reject(f"{eid} {quant.label} tp={tp}", (
                                f"online {quant.label} quantization loads the {req.model.dtype} weights first "
                                f"({full.weights_gib:.2f} GiB per GPU), more than the {full.budget_gib:.2f} GiB budget"),
                                quant.source)
                            continue
                    bits = quant.bits if quant.method else 16
                    sized = _size(req, eid, eng, quant, kv, tp, pp, chunked, bits)
                    label = f"{eid} {quant.label or dtype}{' kv ' + kv if kv else ''} tp={tp} pp={pp}"
                    if not sized.fits:
                        plan.misses.append((label, sized.reason or "does not fit"))
                        _suggest_tighter(req, eid, eng, dtype, quant, kv, (tp, pp), chunked, sized, log)
                        continue
                    plan.options.append(Option(
                        engine=eid, version=version, dtype=dtype, quant=quant, kv_dtype=kv, tp=tp, pp=pp,
                        replicas=req.gpu_count // (tp * pp), plan=sized, chunked_prefill=chunked,
                        env=tuple(env.items()), notes=tuple(notes)))


def _suggest_tighter(req: Request, eid: str, eng: dict[str, Any], dtype: str, quant: QuantChoice, kv: str | None,
                     layout: tuple[int, int], chunked: bool, missed: MemoryPlan, log: RuleLog) -> None:
    """An unquantized setup that misses only by the memory fraction, and would then hold the whole workload:
    say what a tighter fraction gives (an action, never a recommendation: it leaves no room for CUDA graphs)."""
    if quant.method or kv or "gpu_memory_utilization" in req.flags or missed.gpu_memory_utilization >= TIGHT_UTILIZATION:
        return
    tp, pp = layout
    tight = _size(req, eid, eng, quant, kv, tp, pp, chunked, 16, utilization=TIGHT_UTILIZATION)
    workload = req.workload.concurrency * (req.workload.prompt_tokens + req.workload.output_tokens)
    if tight.fits and tight.kv_tokens >= workload:
        log.act(f"{eng['name']} in {dtype} would fit with gpu_memory_utilization={TIGHT_UTILIZATION} and "
                f"tensor_parallel_size={tp} (KV cache {tight.kv_tokens} tokens, max_model_len {tight.max_model_len}), "
                f"leaving little room for CUDA graphs: add enforce_eager")


def enumerate_options(req: Request) -> Plan:
    """All configurations that pass the rules and fit, for the requested engine or every engine."""
    plan = Plan(options=[], misses=[], log=RuleLog())
    for eid in ([req.engine] if req.engine else ENGINE_ORDER):
        _engine_options(req, eid, plan)
    return plan

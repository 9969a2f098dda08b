"""Enumerates the configurations that pass the hard rules and fit in memory.

Runs once per recommendation, between validation and simulation: engine -> release (newest the driver,
GPU and model allow, or the requested one) -> dtype -> weight quantization -> KV dtype -> parallel
layout, each step filtered by `advisor.rules`, then sized by `advisor.sizing`. User-fixed flags narrow
the choices instead of being overridden; when one of them is what makes a setup impossible, the
sizing reason names it. Without chunked prefill, a model maximum whose profiling pass leaves no room for
one full-length sequence is lowered to the longest max_model_len that fits (see _capped).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor import memory_accounting, rules
from advisor.catalog import Gpu
from advisor.profiles import EngineProfile, engine_names, flag_key, profile
from advisor.rules import QuantChoice, RuleLog, VersionChoice
from advisor.sizing import BLOCK_TOKENS, MemoryPlan, plan_memory
from advisor.validation import Request

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
    prefix_caching: bool
    multi_lora: bool
    env: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    attention_flags: tuple[tuple[str, str | bool], ...] = ()  # by flag-table key: the fallback backend's switch

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
    missed_sizes: dict[str, MemoryPlan] = field(default_factory=dict)  # each near miss's sizing, by its label


def _lengths(req: Request) -> tuple[int, int, int | None]:
    """(wanted, required, fixed) context lengths for the sizing."""
    needed = req.workload.prompt_tokens + req.workload.output_tokens
    fixed = req.flags.get("max_model_len")
    wanted = min(req.model.max_context, req.max_context or req.model.max_context)
    required = max(needed, req.max_context or 0)
    return wanted, required, fixed


def _utilization(eng: EngineProfile, flags: dict[str, Any]) -> float:
    """The user's memory fraction, else the engine default — never raised on the user's behalf."""
    if "gpu_memory_utilization" in flags:
        return float(flags["gpu_memory_utilization"])
    return eng.memory_fraction.default


def _chunked(eng: EngineProfile, version: str, flags: dict[str, Any]) -> bool:
    """Chunked prefill where this release has it (on by default, or switched on by the advisor's flag),
    unless the user fixed the release's switch to false."""
    entry = eng.technique("chunked_prefill", version)
    if entry is None:
        return False
    switch = flag_key(entry.flag) if entry.flag and not entry.takes_value else None
    return not (switch in flags and flags[switch] in (False, "false", 0))


DEFAULT_MAX_NUM_SEQS = 256  # what the advisor assumes for an engine whose profile states no default
TIGHT_UTILIZATION = 0.95  # the most the advisor will suggest; vLLM warns CUDA graphs need 1-3 GiB outside it


def default_max_num_seqs(eng: EngineProfile, version: str, gpu: Gpu) -> int:
    """The engine's batch cap at this release on this GPU when the user does not set one."""
    value = eng.default("max_num_seqs", version, gpu)
    return int(value) if value is not None else DEFAULT_MAX_NUM_SEQS


def _size(req: Request, eng: EngineProfile, version: str, quant: QuantChoice, kv: str | None, tp: int, pp: int,
          chunked: bool, bits: float, utilization: float | None = None, length: int | None = None) -> MemoryPlan:
    """Size one configuration; `length` tries a max_model_len of the advisor's choosing (see _capped)."""
    wanted, required, fixed = _lengths(req)
    fixed = fixed or length
    if req.model.max_context < required:
        required = req.model.max_context
    seqs = int(req.flags.get("max_num_seqs") or default_max_num_seqs(eng, version, req.gpu))
    default_batched = eng.default("max_num_batched_tokens", version, req.gpu)
    batched = int(req.flags.get("max_num_batched_tokens") or default_batched or CHUNK_TOKENS) if chunked else None
    return plan_memory(
        req.model, req.gpu, bits=bits, method=quant.method, kv_bytes=KV_BYTES.get(kv, 1.0), tp=tp, pp=pp,
        utilization=utilization or _utilization(eng, req.flags), wanted_len=wanted, required_len=required, fixed_len=fixed,
        max_num_seqs=seqs, batched_tokens=batched, acct=memory_accounting.line(eng.id, version),
        fraction_of_free=eng.memory_fraction.of == "free_after_weights",
        block_tokens=eng.block_size or BLOCK_TOKENS)


LENGTH_STEP = 1024  # max_model_len is lowered in whole steps, as people configure it
KV_CAP_SOURCE = "https://github.com/vllm-project/vllm/issues/6689"  # 405B FP8 on 8 x A100: --max-model-len 4096


def _capped(req: Request, eng: EngineProfile, version: str, quant: QuantChoice, kv: str | None, tp: int, pp: int,
            bits: float, full: MemoryPlan) -> tuple[MemoryPlan, str] | None:
    """Without chunked prefill the start-up profiling pass runs max_model_len tokens at once, so for the
    largest models the model's maximum leaves a KV pool that cannot hold one sequence of that length. The
    longest max_model_len (in LENGTH_STEP steps, at least the workload's) whose pool holds one such sequence,
    with a line that shows the arithmetic; None when even the workload's length does not fit."""
    wanted, required, _ = _lengths(req)
    lo, hi = max(1, -(-min(required, wanted) // LENGTH_STEP)), wanted // LENGTH_STEP
    best: MemoryPlan | None = None
    while lo <= hi:  # a shorter length shrinks the profiling pass and needs fewer KV tokens: monotone
        mid = (lo + hi) // 2
        trial = _size(req, eng, version, quant, kv, tp, pp, False, bits, length=mid * LENGTH_STEP)
        if trial.fits:
            best, lo = trial, mid + 1
        else:
            hi = mid - 1
    if best is None:
        return None
    note = (f"max_model_len lowered from the model's {wanted} to {best.max_model_len}: without chunked prefill the "
            f"profiling pass at {wanted} tokens takes ~{full.activation_gib:.2f} GiB and leaves {full.kv_cache_gib:.2f} GiB "
            f"of KV cache = {full.kv_tokens} tokens at {full.kv_bytes_per_token / 1024:.0f} KiB/token, less than one "
            f"{wanted}-token sequence; at {best.max_model_len} the pass takes ~{best.activation_gib:.2f} GiB and "
            f"{best.kv_cache_gib:.2f} GiB holds {best.kv_tokens} tokens ({KV_CAP_SOURCE})")
    return best, note


def _engine_options(req: Request, eng: EngineProfile, plan: Plan) -> None:
    eid, log = eng.id, plan.log
    if not rules.engine_supports_gpu(eng, req.gpu, log):
        return
    dtypes = rules.dtype_choices(eng, req.gpu, req.model, req.flags, log)  # before the release: its fix comes first
    version = rules.choose_version(eng, req, log)
    if version is None:
        return
    env, notes = rules.attention_env(eng, version.version, req.gpu, req.model)
    backend_flags = tuple(rules.attention_flags(eng, version.version, req.gpu).items())
    chunked = _chunked(eng, version.version, req.flags)
    prefix = req.workload.shared_prefix_tokens > 0 and eng.technique("prefix_caching", version.version) is not None
    lora = req.workload.lora_adapters > 0
    if lora and eng.technique("multi_lora", version.version) is None:
        log.reject(f"{eid} {version.version}", f"{req.workload.lora_adapters} LoRA adapters requested, and the catalog "
                   f"holds no multi-LoRA switch for {eng.name} {version.version}")
        return
    seen: set[tuple[str, QuantChoice]] = set()
    for model_dtype in dtypes:
        for quant in rules.quant_choices(eng, version.version, req.gpu, req.model, req.flags, log):
            dtype = rules.quant_dtype(model_dtype, quant, log)
            if (dtype, quant) in seen:
                continue
            seen.add((dtype, quant))
            for kv in rules.kv_choices(eng, version.version, req.gpu, req.flags, log):
                for tp, pp in rules.layouts(eng, req.model, req.gpu_count, quant, req.flags, log):
                    if quant.online_full_weights:
                        full = _size(req, eng, version.version, QuantChoice(None, None, 16, "fp16"), kv, tp, pp, chunked, 16)
                        if full.weights_gib + full.activation_gib > full.budget_gib:
                            log.reject(f"{eid} {quant.label} tp={tp}", (
                                f"online {quant.label} quantization loads the {req.model.dtype} weights first "
                                f"({full.weights_gib:.2f} GiB per GPU), more than the {full.budget_gib:.2f} GiB budget"),
                                quant.source)
                            continue
                    bits = quant.bits if quant.method else 16
                    sized = _size(req, eng, version.version, quant, kv, tp, pp, chunked, bits)
                    label = f"{eid} {quant.label or dtype}{' kv ' + kv if kv else ''} tp={tp} pp={pp}"
                    extra: tuple[str, ...] = ()
                    if not sized.fits and not chunked and "max_model_len" not in req.flags:
                        capped = _capped(req, eng, version.version, quant, kv, tp, pp, bits, sized)
                        if capped:
                            sized, extra = capped[0], (capped[1],)
                    if not sized.fits:
                        plan.misses.append((label, sized.reason or "does not fit"))
                        plan.missed_sizes[label] = sized
                        _suggest_tighter(req, eng, version.version, dtype, quant, kv, (tp, pp), chunked, sized, log)
                        continue
                    plan.options.append(Option(
                        engine=eid, version=version, dtype=dtype, quant=quant, kv_dtype=kv, tp=tp, pp=pp,
                        replicas=req.gpu_count // (tp * pp), plan=sized, chunked_prefill=chunked,
                        prefix_caching=prefix, multi_lora=lora, env=tuple(env.items()), notes=(*notes, *extra),
                        attention_flags=backend_flags))


def _suggest_tighter(req: Request, eng: EngineProfile, version: str, dtype: str, quant: QuantChoice, kv: str | None,
                     layout: tuple[int, int], chunked: bool, missed: MemoryPlan, log: RuleLog) -> None:
    """An unquantized setup that misses only by the memory fraction, and would then hold the whole workload:
    say what a tighter fraction gives (an action, never a recommendation: it leaves no room for CUDA graphs)."""
    if quant.method or kv or "gpu_memory_utilization" in req.flags or missed.gpu_memory_utilization >= TIGHT_UTILIZATION:
        return
    tp, pp = layout
    tight = _size(req, eng, version, quant, kv, tp, pp, chunked, 16, utilization=TIGHT_UTILIZATION)
    workload = req.workload.concurrency * (req.workload.prompt_tokens + req.workload.output_tokens)
    if tight.fits and tight.kv_tokens >= workload:
        log.act(f"{eng.name} in {dtype} would fit with gpu_memory_utilization={TIGHT_UTILIZATION} and "
                f"tensor_parallel_size={tp} (KV cache {tight.kv_tokens} tokens, max_model_len {tight.max_model_len}), "
                f"leaving little room for CUDA graphs: add enforce_eager")


def enumerate_options(req: Request) -> Plan:
    """All configurations that pass the rules and fit, for the requested engine or every engine."""
    plan = Plan(options=[], misses=[], log=RuleLog())
    for eid in ([req.engine] if req.engine else engine_names()):
        _engine_options(req, profile(eid), plan)
    return plan

"""Hard compatibility rules: which engine versions, dtypes, quantizations, KV dtypes and parallel
layouts can run at all on the requested GPU, driver and model.

Runs for every recommendation, before sizing. Each rule reads the catalogs and either lets an option
through or rejects it with a reason and the source of the fact (compute capability limits, kernels per
architecture, wheel CUDA builds versus the driver, model support per release, attention backends).
Nothing here is case-specific: the rules are the catalog facts applied to the request.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.catalog import Gpu
from advisor.model_specs import ModelSpec, quantized_checkpoints
from advisor.profiles import DtypeRule, EngineProfile, Quantization, Release
from advisor.validation import Request
from advisor.versions import at_least, at_most, vkey


@dataclass(frozen=True)
class Rejection:
    """An option that cannot work, why, and where the fact comes from."""

    option: str
    reason: str
    source: str | None = None

    def as_dict(self) -> dict[str, str]:
        text = f"{self.reason} — source {self.source}" if self.source else self.reason
        return {"option": self.option, "reason": text, "source": self.source or ""}


@dataclass(frozen=True)
class VersionChoice:
    """An engine release and the CUDA build of it that this host's driver can run.

    `release` is the catalogued release whose facts apply; when the user named a release the catalog
    lacks, `version` is theirs, `release` the nearest earlier catalogued one and `verified` is False."""

    version: str
    cuda: str | None
    variant: bool
    release: Release
    verified: bool = True


@dataclass(frozen=True)
class QuantChoice:
    """A weight format: `method` is the engine's own name, `label` what the answer reports.

    `checkpoint_id` names a published pre-quantized checkpoint to serve instead of the original;
    `self_quantize` means nobody publishes one the catalog knows, so the operator must quantize first.
    `kernel` is the faster implementation the release picks on this GPU (e.g. awq_marlin), passed as
    the method name so the engine is not forced onto the slower kernel.
    """

    method: str | None
    label: str | None
    bits: float
    compute: str
    kernel: str | None = None
    act_dtypes: tuple[str, ...] = ()
    act_source: str | None = None
    checkpoint_id: str | None = None
    intermediate: int | None = None  # a published checkpoint may pad the MLP width for tensor parallelism
    self_quantize: bool = False
    online_full_weights: bool = False
    source: str | None = None
    quote: str | None = None

    @property
    def tier(self) -> int:
        """Precision given up: 0 none, 1 for 8-bit, 2 for 4-bit weights."""
        return 0 if self.method is None else (1 if self.bits >= 8 else 2)


@dataclass
class RuleLog:
    """Rejections and follow-up actions collected while the rules run (deduplicated)."""

    rejections: dict[str, Rejection] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _acted: set[str] = field(default_factory=set, repr=False)

    def reject(self, option: str, reason: str, source: str | None = None) -> None:
        self.rejections.setdefault(option, Rejection(option, reason, source))

    def act(self, action: str, first: bool = False) -> None:
        """Record an action; `first` puts a fix of the request itself ahead of changes to the host (a pinned
        dtype the GPU lacks is fixed by a flag, before any driver upgrade)."""
        if action not in self.actions:
            self.actions.insert(0 if first else len(self.actions), action)

    def act_once(self, key: str, action: str) -> None:
        """An action named by `key` once: releases are tried newest first, so a driver upgrade is offered
        for the newest release it unlocks, not once for every older release built for the same CUDA."""
        if key not in self._acted:
            self._acted.add(key)
            self.act(action)

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)


def cc_text(gpu: Gpu) -> str:
    return f"{gpu.name} (sm{gpu.compute_capability.replace('.', '')})"


def engine_supports_gpu(eng: EngineProfile, gpu: Gpu, log: RuleLog) -> bool:
    """Engine-wide minimum compute capability."""
    need = eng.min_compute_capability
    if at_least(gpu.compute_capability, need):
        return True
    log.reject(eng.id, f"{eng.name} needs compute capability >= {need}; {cc_text(gpu)} is below it", eng.min_cc_source)
    return False


def _release_supports_gpu(eng: EngineProfile, release: Release, version: str, gpu: Gpu, log: RuleLog) -> bool:
    """A release may raise the engine's compute-capability floor (a line that dropped an architecture)."""
    need = eng.min_cc_at(release.version)
    if at_least(gpu.compute_capability, need):
        return True
    raised = next((r for r in reversed(eng.releases) if r.min_compute_capability and at_most(r.version, release.version)), release)
    log.reject(f"{eng.id} {version}", f"{eng.name} {version} needs compute capability >= {need} (from {raised.version}); "
               f"{cc_text(gpu)} is below it", raised.source_of("min_compute_capability"))
    return False


def _model_supported(eng: EngineProfile, version: str, model: ModelSpec, log: RuleLog) -> bool:
    for feature in (model.architecture, *model.special):
        support = eng.models.get(feature)
        if support and not at_least(version, support.since):
            log.reject(f"{eng.id} {version}", f"{feature} ({model.id}) is supported from {eng.name} {support.since}",
                       support.source)
            return False
    return True


def _flash_ok(eng: EngineProfile, gpu: Gpu) -> bool:
    attention = eng.attention
    backend = attention.backends.get(attention.flash_backend) if attention else None
    return backend is None or at_least(gpu.compute_capability, backend.min_cc)


def _attention_ok(eng: EngineProfile, version: str, gpu: Gpu, model: ModelSpec, log: RuleLog) -> bool:
    """Soft-capped attention (Gemma 2) needs a backend that implements it on this GPU and release."""
    softcap = eng.attention.softcap if eng.attention else None
    if softcap is None or "attn_logit_softcapping" not in model.special:
        return True
    if _flash_ok(eng, gpu) or (softcap.xformers_since and at_least(version, softcap.xformers_since)):
        return True
    attention = eng.attention
    flash = attention.backends[attention.flash_backend] if attention else None
    need = f"sm{flash.min_cc.replace('.', '')}+" if flash else "a flash backend"
    if softcap.xformers_since:
        why = f"the XFormers backend supports soft-capping only from {eng.name} {softcap.xformers_since}"
    else:
        why = f"{eng.name} has no other backend that implements it"
    log.reject(f"{eng.id} {version}", (
        f"{model.id} uses attention logit soft-capping; on {cc_text(gpu)} FlashAttention/FlashInfer are unavailable "
        f"(they need {need}) and {why}"), softcap.xformers_source or softcap.source)
    return False


def attention_flags(eng: EngineProfile, version: str, gpu: Gpu) -> dict[str, str | bool]:
    """Engine flags (by flag-table key) that select the fallback attention backend on a GPU the flash backend
    cannot run on, in this release's spelling; empty where the engine falls back by itself."""
    attention = eng.attention
    if attention is None or _flash_ok(eng, gpu):
        return {}
    entry = next((f for f in attention.fallback_flags if f.covers(version) and eng.flag(f.key, version)), None)
    return {entry.key: entry.value} if entry else {}


def attention_env(eng: EngineProfile, version: str, gpu: Gpu, model: ModelSpec) -> tuple[dict[str, str], list[str]]:
    """Environment the engine needs for this model/GPU, and rationale lines about the attention backend."""
    attention = eng.attention
    if attention is None:
        return {}, []
    notes: list[str] = []
    flash = attention.backends.get(attention.flash_backend)
    if flash is not None and not _flash_ok(eng, gpu):
        fallback = next((name for name, b in attention.backends.items()
                         if name != attention.flash_backend and at_least(gpu.compute_capability, b.min_cc) and b.covers(version)), None)
        chosen = "".join(f" (set by {eng.flag(k, version)}{'' if v is True else f' {v}'})"
                         for k, v in attention_flags(eng, version, gpu).items())
        notes.append(f"{attention.flash_name} needs sm{flash.min_cc.replace('.', '')}+; on {cc_text(gpu)} {eng.name} falls back "
                     f"to the {fallback or 'slower'} backend{chosen} ({flash.source})")
    softcap = attention.softcap
    if (softcap and attention.backend_env and "attn_logit_softcapping" in model.special and _flash_ok(eng, gpu)
            and softcap.flash_attn_since and not at_least(version, softcap.flash_attn_since)):
        notes.append(f"{model.id} needs logit soft-capping, which this release implements only in FlashInfer "
                     f"({softcap.source}): set {attention.backend_env}=FLASHINFER")
        return {attention.backend_env: "FLASHINFER"}, notes
    return {}, notes


def _cuda_build(eng: EngineProfile, release: Release, version: str, verified: bool, gpu: Gpu, driver: str | None,
                log: RuleLog) -> VersionChoice | None:
    builds = [(release.cuda, False)] + [(c, True) for c in release.cuda_variants] if release.cuda else []
    if gpu.min_cuda and builds:
        # a build from an older CUDA has no kernels for this architecture
        arch_ok = [(c, v) for c, v in builds if at_least(c, gpu.min_cuda)]
        if not arch_ok:
            log.reject(f"{eng.id} {version}", f"{eng.name} {version} wheels are built for CUDA {', '.join(c for c, _ in builds)}; "
                       f"{gpu.name} needs CUDA >= {gpu.min_cuda} kernels", gpu.min_cuda_source)
            return None
        builds = arch_ok
    if gpu.dropped_in_cuda and builds:
        # a build from a CUDA that dropped this architecture has no kernels for it either
        arch_ok = [(c, v) for c, v in builds if not at_least(c, gpu.dropped_in_cuda)]
        if not arch_ok:
            log.reject(f"{eng.id} {version}", f"{eng.name} {version} wheels are built for CUDA {', '.join(c for c, _ in builds)}; "
                       f"CUDA {gpu.dropped_in_cuda} and later have no kernels for {gpu.name}", gpu.dropped_in_cuda_source)
            return None
        builds = arch_ok
    if release.cuda is None or driver is None:
        cuda = builds[0][0] if builds else release.cuda
        return VersionChoice(version, cuda, bool(builds) and builds[0][1], release, verified)
    usable = [(c, variant) for c, variant in builds if at_most(c, driver)]
    if not usable:
        lowest = min((c for c, _ in builds), key=vkey)
        log.reject(f"{eng.id} {version}", (
            f"{eng.name} {version} wheels are built for CUDA {', '.join(c for c, _ in builds)}; the driver supports "
            f"CUDA {driver}"), eng.cuda_rule.source if eng.cuda_rule else release.source_of("cuda"))
        log.act_once(f"cuda>={lowest} {eng.id}",
                     f"upgrade the NVIDIA driver to one that supports CUDA >= {lowest} to use {eng.name} {version}")
        return None
    cuda, variant = max(usable, key=lambda cv: vkey(cv[0]))
    return VersionChoice(version, cuda, variant, release, verified)


def requested_release(eng: EngineProfile, version: str) -> tuple[Release, bool] | None:
    """The catalogued release whose facts answer for a requested `version`, and whether it is that very
    release. A rolling-release engine (llama.cpp builds) answers with its newest catalogued build; a
    version between catalogued releases with the nearest earlier one, unverified; None before the first."""
    exact = eng.release(version)
    if exact is not None:
        return exact, True
    if eng.rolling_release:
        return eng.releases[-1], False
    before, _ = eng.nearest_releases(version)
    return (before, False) if before is not None else None


def choose_version(eng: EngineProfile, req: Request, log: RuleLog) -> VersionChoice | None:
    """The requested release, or the newest one this driver, GPU and model can run."""
    if req.engine == eng.id and req.engine_version:
        found = requested_release(eng, req.engine_version)
        if found is None:
            return None
        candidates = [(req.engine_version, found[0], found[1])]
    else:
        candidates = [(r.version, r, True) for r in reversed(eng.releases)]
    for version, release, verified in candidates:
        if not (_release_supports_gpu(eng, release, version, req.gpu, log) and _model_supported(eng, version, req.model, log)
                and _attention_ok(eng, version, req.gpu, req.model, log)):
            continue
        choice = _cuda_build(eng, release, version, verified, req.gpu, req.cuda, log)
        if choice:
            return choice
    return None


def dtype_refusal(eng: EngineProfile, compute_capability: str, dtype: str) -> DtypeRule | None:
    """The engine's rule that refuses `dtype` on a GPU of this compute capability, or None when it runs
    (also None for a dtype the profile has no rule for). Diagnose asks it to answer a pasted dtype error."""
    rule = eng.dtypes.get(dtype)
    return None if rule is None or at_least(compute_capability, rule.min_cc) else rule


def dtype_choices(eng: EngineProfile, gpu: Gpu, model: ModelSpec, flags: dict[str, Any], log: RuleLog) -> list[str]:
    """Activation/weight dtype: the checkpoint's own when the GPU supports it, else float16."""
    wanted = flags.get("dtype")
    if wanted in (None, "auto"):
        wanted = model.dtype if model.dtype in ("bfloat16", "float16") else "float16"
        fallback = True
    else:
        fallback = False
    rule = dtype_refusal(eng, gpu.compute_capability, str(wanted))
    if rule is None:
        return [str(wanted)]
    log.reject(wanted if wanted != "bfloat16" else "bf16",
               f"{cc_text(gpu)} has no {wanted} support ({eng.name} needs compute capability >= {rule.min_cc})", rule.source)
    if fallback and wanted == "bfloat16":
        log.warn(f"{model.id} ships {model.dtype} weights; serving in float16 on {gpu.name} (values beyond the fp16 range may overflow)")
        return ["float16"]
    half = eng.dtypes.get("float16")
    if wanted == "bfloat16" and half and at_least(gpu.compute_capability, half.min_cc):
        log.act(f"set dtype=half (float16) instead of the pinned {wanted}: {cc_text(gpu)} has no {wanted}, "
                f"float16 runs on it in {eng.name} ({rule.source})", first=True)
    return []


def _allowed(eng: EngineProfile, version: str, gpu: Gpu, name: str, spec: Quantization,
             log: RuleLog, requested_checkpoint: bool = False) -> str | None:
    """The compute precision the method runs at on this GPU and release, or None (rejected).

    FP8 weights on GPUs without FP8 compute (weight-only, Marlin W8A16) are allowed only for a checkpoint
    the user asked for; the advisor does not pick FP8 below sm89 on its own."""
    label = f"{eng.id} {spec.report_as or name}"
    if not spec.covers(version):
        span = f"from {eng.name} {spec.since}" if not at_least(version, spec.since) else f"until {eng.name} {spec.until}"
        log.reject(label, f"{name} is available {span}", spec.since_source or spec.source)
        return None
    if at_least(gpu.compute_capability, spec.min_cc):
        return spec.compute
    weight_only = spec.weight_only_at(version) if requested_checkpoint else None
    if weight_only and at_least(gpu.compute_capability, weight_only.min_cc):
        return "fp16"  # FP8 weights, fp16 math (Marlin W8A16)
    floor = weight_only.min_cc if weight_only else spec.min_cc
    log.reject(label, f"{cc_text(gpu)} has no {name} kernels in {eng.name} {version} (needs sm{floor.replace('.', '')}+)",
               weight_only.source if weight_only else spec.source)
    return None


def _runs(spec: Quantization, version: str, gpu: Gpu) -> bool:
    """True when the method has native kernels on this GPU in this release."""
    return spec.covers(version) and at_least(gpu.compute_capability, spec.min_cc)


def kernel_for(spec: Quantization, version: str, gpu: Gpu) -> str | None:
    """The faster kernel this release picks for the method on this GPU (e.g. awq_marlin), if any."""
    for kernel in spec.kernels:
        if kernel.covers(version) and at_least(gpu.compute_capability, kernel.min_cc):
            return kernel.name
    return None


def quant_dtype(dtype: str, quant: QuantChoice, log: RuleLog) -> str:
    """Activation dtype for a quantized format whose kernels take only some dtypes (AWQ: float16)."""
    if not quant.act_dtypes or dtype in quant.act_dtypes:
        return dtype
    log.reject(f"{quant.label} + {dtype}", f"{quant.label} kernels take {', '.join(quant.act_dtypes)} activations only; "
               f"serving with dtype {quant.act_dtypes[0]}", quant.act_source)
    return quant.act_dtypes[0]


def _choice(name: str, spec: Quantization, compute: str, kernel: str | None, **fields: Any) -> QuantChoice:
    """A QuantChoice carrying the method's activation-dtype rule; `fields` override the method's defaults."""
    act = spec.act_dtypes
    base: dict[str, Any] = {"bits": spec.bits, "source": spec.source, "quote": spec.quote}
    base.update(fields)
    return QuantChoice(method=name, label=spec.report_as or name, compute=compute, kernel=kernel,
                       act_dtypes=tuple(act.allowed) if act else (), act_source=act.source if act else None, **base)


def quant_choices(eng: EngineProfile, version: str, gpu: Gpu, model: ModelSpec, flags: dict[str, Any],
                  log: RuleLog) -> list[QuantChoice]:
    """No quantization, published pre-quantized checkpoints, online methods, and self-quantization last."""
    table = eng.quantization
    if model.quantization:  # the requested checkpoint is already quantized: that fixes the method
        name = next((n for n in table if n == model.quantization or n.startswith(model.quantization)), None)
        if name is None:
            log.reject(f"{eng.id} {model.quantization}", f"{eng.name} has no loader for {model.quantization} checkpoints in the catalog")
            return []
        compute = _allowed(eng, version, gpu, name, table[name], log, requested_checkpoint=True)
        if compute is None:
            return []
        return [_choice(name, table[name], compute, kernel_for(table[name], version, gpu), bits=model.weight_bits)]
    if "quantization" in flags and flags["quantization"] in (None, "none", ""):
        return [QuantChoice(None, None, 16, "fp16")]  # the user fixed: no quantization
    wanted = flags.get("quantization")
    names = [n for n, q in table.items() if (not wanted and not q.requested_only) or wanted in (n, q.report_as)]
    if wanted and not names:
        log.reject(f"{eng.id} {wanted}", f"{eng.name} does not list a '{wanted}' quantization")
        return []
    out = [] if wanted else [QuantChoice(None, None, 16, "fp16")]
    if wanted and not any(_runs(table[n], version, gpu) for n in names):
        able = [q.report_as or n for n, q in table.items() if not q.requested_only and _runs(q, version, gpu)]
        log.act(f"set quantization to one that {eng.name} {version} runs on {cc_text(gpu)} instead of the pinned {wanted}: "
                f"{', '.join(able) or 'none (16-bit weights)'}", first=True)
    published = quantized_checkpoints(model.catalog_id)
    for name in names:
        spec = table[name]
        compute = _allowed(eng, version, gpu, name, spec, log)
        if compute is None:
            continue
        kernel = kernel_for(spec, version, gpu)
        # engines with their own quantized format (TensorRT-LLM engines, GGUF) do not load others' checkpoints
        known = [] if eng.own_quantized_format else [
            c for c in published if c["quantization"] == name or name.startswith(c["quantization"])]
        out += [_choice(name, spec, compute, kernel, bits=float(c["weight_bits"]), checkpoint_id=c["id"],
                        intermediate=c.get("intermediate"), source=c["source"],
                        quote=f"{c['id']}: {c['quantization']} checkpoint of {c['base']}") for c in known[:1]]
        if spec.checkpoint or eng.own_quantized_format:
            if not known:
                out.append(_choice(name, spec, compute, kernel, self_quantize=not eng.routine_conversion))
            continue
        online = spec.online_needs_full_weights
        out.append(_choice(name, spec, compute, kernel, online_full_weights=online,
                           source=spec.online_source if online else spec.source,
                           quote=spec.online_quote if online else spec.quote))
    return out


def kv_choices(eng: EngineProfile, version: str, gpu: Gpu, flags: dict[str, Any], log: RuleLog) -> list[str | None]:
    """KV-cache dtype: the model dtype, plus the engine's fp8 cache where this release and GPU allow it."""
    if "kv_cache_dtype" in flags:  # fixed by the user ("auto" means the model dtype)
        wanted = flags["kv_cache_dtype"]
        if wanted in (None, "auto"):
            return [None]
        pinned = eng.kv_cache_dtypes.get(str(wanted))
        if pinned and pinned.min_cc and not at_least(gpu.compute_capability, pinned.min_cc):
            log.reject(f"{eng.id} kv_cache_dtype={wanted}", f"{cc_text(gpu)} cannot use an FP8 KV cache in {eng.name} "
                       f"(needs sm{pinned.min_cc.replace('.', '')}+)", pinned.source)
            log.act(f"set kv_cache_dtype=auto instead of the pinned {wanted}: {cc_text(gpu)} has no FP8 KV cache in "
                    f"{eng.name}", first=True)
            return []
        return [str(wanted)]
    out: list[str | None] = [None]
    for name, rule in eng.kv_cache_dtypes.items():
        if not rule.covers(version):
            continue
        if rule.min_cc and not at_least(gpu.compute_capability, rule.min_cc):
            log.reject(f"{eng.id} kv_cache_dtype={name}", f"{cc_text(gpu)} cannot use an FP8 KV cache in {eng.name}", rule.source)
            continue
        out.append(name)
    return out


def _tp_divides(model: ModelSpec, tp: int) -> bool:
    return model.heads % tp == 0 and (model.kv_heads % tp == 0 or tp % model.kv_heads == 0)


def layouts(eng: EngineProfile, model: ModelSpec, gpu_count: int, quant: QuantChoice, flags: dict[str, Any],
            log: RuleLog) -> list[tuple[int, int]]:
    """(tensor_parallel, pipeline_parallel) splits of one replica that the model's shape allows."""
    fixed_tp, fixed_pp = flags.get("tensor_parallel_size"), int(flags.get("pipeline_parallel_size", 1))
    if not eng.tensor_parallel:  # layer split across GPUs only
        return [(1, fixed_pp)] if flags.get("pipeline_parallel_size") else sorted({(1, 1), (1, gpu_count)})
    sizes = [int(fixed_tp)] if fixed_tp else [t for t in range(1, gpu_count + 1) if gpu_count % t == 0]
    out = []
    spec = eng.quantization.get(quant.method or "")
    align = spec.tp_alignment if spec else None
    for tp in sizes:
        if not _tp_divides(model, tp):
            log.reject(f"tensor_parallel_size={tp}", (
                f"{model.id} has {model.heads} attention heads and {model.kv_heads} KV heads; tensor parallelism must divide them"),
                eng.tp_rule.source if eng.tp_rule else None)
            if fixed_tp:
                valid = [t for t in range(1, gpu_count + 1) if gpu_count % t == 0 and _tp_divides(model, t)]
                log.act(f"set tensor_parallel_size to one that divides {model.id}'s {model.heads} attention heads instead of "
                        f"the pinned {tp}: {', '.join(map(str, valid))}", first=True)
            continue
        if align and quant.bits <= 4 and tp > 1:
            width = quant.intermediate or model.intermediate
            row_inputs = [width // tp if width % tp == 0 else 1, model.heads * model.head_dim // tp]
            if any(x % align.multiple for x in row_inputs):
                log.reject(f"{quant.label} tensor_parallel_size={tp}", (
                    f"the {quant.label} kernels need each GPU's row-parallel input ({', '.join(map(str, row_inputs))}) "
                    f"to be a multiple of {align.multiple}"), align.source)
                continue
        out.append((tp, fixed_pp))
    return out

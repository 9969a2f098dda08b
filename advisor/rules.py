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
from advisor.validation import Request
from advisor.versions import at_least, at_most, vkey

CC_SOURCE = "https://developer.nvidia.com/cuda-gpus"
INT4_ROW_PARALLEL = 128


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
    """An engine release and the CUDA build of it that this host's driver can run."""

    version: str
    cuda: str | None
    variant: bool
    entry: dict[str, Any]


@dataclass(frozen=True)
class QuantChoice:
    """A weight format: `method` is the engine's own name, `label` what the answer reports.

    `checkpoint_id` names a published pre-quantized checkpoint to serve instead of the original;
    `self_quantize` means nobody publishes one the catalog knows, so the operator must quantize first.
    """

    method: str | None
    label: str | None
    bits: float
    compute: str
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

    def reject(self, option: str, reason: str, source: str | None = None) -> None:
        self.rejections.setdefault(option, Rejection(option, reason, source))

    def act(self, action: str) -> None:
        if action not in self.actions:
            self.actions.append(action)

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)


def cc_text(gpu: Gpu) -> str:
    return f"{gpu.name} (sm{gpu.compute_capability.replace('.', '')})"


def engine_supports_gpu(eid: str, eng: dict[str, Any], gpu: Gpu, log: RuleLog) -> bool:
    """Engine-wide minimum compute capability."""
    need = eng["min_compute_capability"]
    if at_least(gpu.compute_capability, need):
        return True
    log.reject(eid, f"{eng['name']} needs compute capability >= {need}; {cc_text(gpu)} is below it",
               eng.get("min_cc_source"))
    return False


def _model_supported(eid: str, eng: dict[str, Any], version: str, model: ModelSpec, log: RuleLog) -> bool:
    table = eng.get("models", {})
    for feature in (model.architecture, *model.special):
        since = table.get(feature, {}).get("since")
        if since and not at_least(version, since):
            log.reject(f"{eid} {version}", f"{feature} ({model.id}) is supported from {eng['name']} {since}",
                       table[feature].get("source"))
            return False
    return True


def _attention_ok(eid: str, eng: dict[str, Any], version: str, gpu: Gpu, model: ModelSpec, log: RuleLog) -> bool:
    """Soft-capped attention (Gemma 2) needs a backend that implements it on this GPU and release."""
    softcap = eng.get("attention", {}).get("softcap")
    if not softcap or "attn_logit_softcapping" not in model.special:
        return True
    flash_ok = at_least(gpu.compute_capability, eng["attention"]["FLASH_ATTN"]["min_cc"])
    if not flash_ok and not at_least(version, softcap["xformers_since"]):
        log.reject(f"{eid} {version}", (
            f"{model.id} uses attention logit soft-capping; on {cc_text(gpu)} FlashAttention/FlashInfer are unavailable "
            f"and the XFormers backend supports soft-capping only from {eng['name']} {softcap['xformers_since']}"),
            softcap.get("xformers_source"))
        return False
    return True


def attention_env(eid: str, eng: dict[str, Any], version: str, gpu: Gpu, model: ModelSpec) -> tuple[dict[str, str], list[str]]:
    """Environment the engine needs for this model/GPU, and rationale lines about the attention backend."""
    attention = eng.get("attention")
    if not attention:
        return {}, []
    notes: list[str] = []
    flash_ok = at_least(gpu.compute_capability, attention["FLASH_ATTN"]["min_cc"])
    if not flash_ok:
        notes.append(f"FlashAttention-2 needs sm80+; on {cc_text(gpu)} {eng['name']} falls back to the XFormers backend "
                     f"({attention['FLASH_ATTN']['source']})")
    softcap = attention.get("softcap")
    if softcap and "attn_logit_softcapping" in model.special and flash_ok and not at_least(version, softcap["flash_attn_since"]):
        notes.append(f"{model.id} needs logit soft-capping, which this release implements only in FlashInfer "
                     f"({softcap['source']}): set VLLM_ATTENTION_BACKEND=FLASHINFER")
        return {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}, notes
    return {}, notes


def _cuda_build(eid: str, eng: dict[str, Any], entry: dict[str, Any], driver: str | None, log: RuleLog) -> VersionChoice | None:
    version = entry["version"]
    if entry.get("cuda") is None or driver is None:
        return VersionChoice(version, entry.get("cuda"), False, entry)
    builds = [(entry["cuda"], False)] + [(c, True) for c in entry.get("cuda_variants", [])]
    usable = [(c, variant) for c, variant in builds if at_most(c, driver)]
    if not usable:
        lowest = min((c for c, _ in builds), key=vkey)
        log.reject(f"{eid} {version}", (
            f"{eng['name']} {version} wheels are built for CUDA {', '.join(c for c, _ in builds)}; the driver supports "
            f"CUDA {driver}"), eng.get("cuda_rule", {}).get("source") or entry.get("source"))
        log.act(f"upgrade the NVIDIA driver to one that supports CUDA >= {lowest} to use {eng['name']} {version}")
        return None
    cuda, variant = max(usable, key=lambda cv: vkey(cv[0]))
    return VersionChoice(version, cuda, variant, entry)


def choose_version(eid: str, eng: dict[str, Any], req: Request, log: RuleLog) -> VersionChoice | None:
    """The requested release, or the newest one this driver, GPU and model can run."""
    entries = sorted(eng["versions"], key=lambda v: vkey(v["version"]), reverse=True)
    if req.engine == eid and req.engine_version:
        fitting = [e for e in entries if at_most(e["version"], req.engine_version)]
        older = not fitting  # before the earliest catalogued release: its build is unknown
        base = (fitting or entries[-1:])[0]
        entry = dict(base, version=req.engine_version, **({"cuda": None, "cuda_variants": []} if older else {}))
        entry = entry if eid != "llama.cpp" else entries[0]
        entries = [entry]
    for entry in entries:
        version = entry["version"]
        if not (_model_supported(eid, eng, version, req.model, log) and _attention_ok(eid, eng, version, req.gpu, req.model, log)):
            continue
        choice = _cuda_build(eid, eng, entry, req.cuda, log)
        if choice:
            return choice
    return None


def dtype_choices(eid: str, eng: dict[str, Any], gpu: Gpu, model: ModelSpec, flags: dict[str, Any], log: RuleLog) -> list[str]:
    """Activation/weight dtype: the checkpoint's own when the GPU supports it, else float16."""
    wanted = flags.get("dtype")
    if wanted in (None, "auto"):
        wanted = model.dtype if model.dtype in ("bfloat16", "float16") else "float16"
        fallback = True
    else:
        fallback = False
    rule = eng.get("dtypes", {}).get(wanted)
    if rule is None or at_least(gpu.compute_capability, rule["min_cc"]):
        return [wanted]
    log.reject(wanted if wanted != "bfloat16" else "bf16",
               f"{cc_text(gpu)} has no {wanted} support ({eng['name']} needs compute capability >= {rule['min_cc']})",
               rule.get("source"))
    if fallback and wanted == "bfloat16":
        log.warn(f"{model.id} ships {model.dtype} weights; serving in float16 on {gpu.name} (values beyond the fp16 range may overflow)")
        return ["float16"]
    return []


def _allowed(eid: str, eng: dict[str, Any], version: str, gpu: Gpu, name: str, spec: dict[str, Any],
             log: RuleLog, requested_checkpoint: bool = False) -> str | None:
    """The compute precision the method runs at on this GPU and release, or None (rejected).

    FP8 weights on GPUs without FP8 compute (weight-only, Marlin W8A16) are allowed only for a checkpoint
    the user asked for; the advisor does not pick FP8 below sm89 on its own."""
    label = f"{eid} {spec.get('report_as', name)}"
    since = spec.get("since")
    if since and not at_least(version, since):
        log.reject(label, f"{name} is available from {eng['name']} {since}", spec.get("source"))
        return None
    native = name == "fp8" and at_least(gpu.compute_capability, spec["min_cc"])
    if at_least(gpu.compute_capability, spec["min_cc"]):
        return "fp8" if native else ("int8" if name == "int8_sq" else "fp16")
    weight_only = spec.get("weight_only_min_cc")
    if (requested_checkpoint and weight_only and at_least(gpu.compute_capability, weight_only)
            and at_least(version, spec.get("weight_only_since"))):
        return "fp16"  # FP8 weights, fp16 math (Marlin W8A16)
    floor = weight_only if requested_checkpoint and weight_only else spec["min_cc"]
    log.reject(label, f"{cc_text(gpu)} has no {name} kernels in {eng['name']} (needs sm{floor.replace('.', '')}+)",
               spec.get("source"))
    return None


def _act_dtypes(spec: dict[str, Any]) -> tuple[str, ...]:
    return tuple(spec.get("act_dtypes", {}).get("allowed", ()))


def _act_source(spec: dict[str, Any]) -> str | None:
    return spec.get("act_dtypes", {}).get("source")


def quant_dtype(dtype: str, quant: QuantChoice, log: RuleLog) -> str:
    """Activation dtype for a quantized format whose kernels take only some dtypes (AWQ: float16)."""
    if not quant.act_dtypes or dtype in quant.act_dtypes:
        return dtype
    log.reject(f"{quant.label} + {dtype}", f"{quant.label} kernels take {', '.join(quant.act_dtypes)} activations only; "
               f"serving with dtype {quant.act_dtypes[0]}", quant.act_source)
    return quant.act_dtypes[0]


def _checkpoint_choice(name: str, spec: dict[str, Any], compute: str, ckpt: dict[str, Any]) -> QuantChoice:
    return QuantChoice(method=name, label=spec.get("report_as", name), bits=float(ckpt["weight_bits"]), compute=compute,
                       act_dtypes=_act_dtypes(spec), act_source=_act_source(spec), checkpoint_id=ckpt["id"],
                       intermediate=ckpt.get("intermediate"), source=ckpt["source"],
                       quote=f"{ckpt['id']}: {ckpt['quantization']} checkpoint of {ckpt['base']}")


def quant_choices(eid: str, eng: dict[str, Any], version: str, gpu: Gpu, model: ModelSpec, flags: dict[str, Any],
                  log: RuleLog) -> list[QuantChoice]:
    """No quantization, published pre-quantized checkpoints, online methods, and self-quantization last."""
    table: dict[str, dict[str, Any]] = eng.get("quantization", {})
    if model.quantization:  # the requested checkpoint is already quantized: that fixes the method
        name = next((n for n in table if n == model.quantization or n.startswith(model.quantization)), None)
        if name is None:
            log.reject(f"{eid} {model.quantization}", f"{eng['name']} has no loader for {model.quantization} checkpoints in the catalog")
            return []
        compute = _allowed(eid, eng, version, gpu, name, table[name], log, requested_checkpoint=True)
        if compute is None:
            return []
        return [QuantChoice(method=name, label=table[name].get("report_as", name), bits=model.weight_bits, compute=compute,
                            act_dtypes=_act_dtypes(table[name]), act_source=_act_source(table[name]), source=table[name].get("source"), quote=table[name].get("quote"))]
    if "quantization" in flags and flags["quantization"] in (None, "none", ""):
        return [QuantChoice(None, None, 16, "fp16")]  # the user fixed: no quantization
    wanted = flags.get("quantization")
    names = [n for n in table if (not wanted and not table[n].get("requested_only")) or wanted in (n, table[n].get("report_as"))]
    if wanted and not names:
        log.reject(f"{eid} {wanted}", f"{eng['name']} does not list a '{wanted}' quantization")
        return []
    out = [] if wanted else [QuantChoice(None, None, 16, "fp16")]
    published = quantized_checkpoints(model.catalog_id)
    for name in names:
        spec = table[name]
        compute = _allowed(eid, eng, version, gpu, name, spec, log)
        if compute is None:
            continue
        # TensorRT-LLM quantizes with its own tool (ModelOpt); llama.cpp converts any checkpoint to GGUF itself
        own_tool = eid in ("tensorrt-llm", "llama.cpp")
        known = [] if own_tool else [c for c in published if c["quantization"] == name or name.startswith(c["quantization"])]
        out += [_checkpoint_choice(name, spec, compute, c) for c in known[:1]]
        if spec.get("checkpoint") or own_tool:
            if not known:
                out.append(QuantChoice(method=name, label=spec.get("report_as", name), bits=float(spec["bits"]),
                                       compute=compute, act_dtypes=_act_dtypes(spec), act_source=_act_source(spec),
                                       self_quantize=eid != "llama.cpp", source=spec.get("source"), quote=spec.get("quote")))
            continue
        online = bool(spec.get("online_needs_full_weights"))
        out.append(QuantChoice(method=name, label=spec.get("report_as", name), bits=float(spec["bits"]), compute=compute,
                               online_full_weights=online, source=spec.get("online_source") if online else spec.get("source"),
                               quote=spec.get("online_quote") if online else spec.get("quote")))
    return out


def kv_choices(eid: str, eng: dict[str, Any], version: str, gpu: Gpu, flags: dict[str, Any], log: RuleLog) -> list[str | None]:
    """KV-cache dtype: the model dtype, plus the engine's fp8 cache where this release and GPU allow it."""
    if "kv_cache_dtype" in flags:  # fixed by the user ("auto" means the model dtype)
        wanted = flags["kv_cache_dtype"]
        return [None if wanted in (None, "auto") else wanted]
    out: list[str | None] = [None]
    for name, rule in eng.get("kv_cache_dtypes", {}).items():
        if not isinstance(rule, dict) or name == "source":
            continue
        if not (at_least(version, rule.get("since")) and at_most(version, rule.get("until"))):
            continue
        if rule.get("min_cc") and not at_least(gpu.compute_capability, rule["min_cc"]):
            log.reject(f"{eid} kv_cache_dtype={name}", f"{cc_text(gpu)} cannot use an FP8 KV cache in {eng['name']}", rule.get("source"))
            continue
        out.append(name)
    return out


def layouts(eid: str, eng: dict[str, Any], model: ModelSpec, gpu_count: int, quant: QuantChoice, flags: dict[str, Any],
            log: RuleLog) -> list[tuple[int, int]]:
    """(tensor_parallel, pipeline_parallel) splits of one replica that the model's shape allows."""
    fixed_tp, fixed_pp = flags.get("tensor_parallel_size"), flags.get("pipeline_parallel_size", 1)
    if eid == "llama.cpp":  # layer split across GPUs, no tensor parallelism
        return [(1, fixed_pp)] if flags.get("pipeline_parallel_size") else sorted({(1, 1), (1, gpu_count)})
    sizes = [fixed_tp] if fixed_tp else [t for t in range(1, gpu_count + 1) if gpu_count % t == 0]
    out = []
    for tp in sizes:
        if model.heads % tp or (model.kv_heads % tp and tp % model.kv_heads):
            log.reject(f"tensor_parallel_size={tp}", (
                f"{model.id} has {model.heads} attention heads and {model.kv_heads} KV heads; tensor parallelism must divide them"),
                eng.get("tp_rule", {}).get("source"))
            continue
        align = eng.get("quantization", {}).get(quant.method or "", {}).get("tp_alignment")
        if align and quant.bits <= 4 and tp > 1:
            width = quant.intermediate or model.intermediate
            row_inputs = [width // tp if width % tp == 0 else 1, model.heads * model.head_dim // tp]
            if any(x % align["multiple"] for x in row_inputs):
                log.reject(f"{quant.label} tensor_parallel_size={tp}", (
                    f"the {quant.label} kernels need each GPU's row-parallel input ({', '.join(map(str, row_inputs))}) "
                    f"to be a multiple of {align['multiple']}"), align["source"])
                continue
        out.append((tp, fixed_pp))
    return out

"""Turns a chosen configuration into what an operator types: install line, engine flags, launch command,
and the benchmark command that verifies the SLA.

Runs for each recommendation in the answer. Flag names are the engine's own (from the catalog's flag
table), so `flags` can be pasted into the engine's config and `command` into a shell.
"""
from __future__ import annotations

import shlex
from typing import Any, Literal

from advisor.planner import Option
from advisor.profiles import EngineProfile, Release, flag_key, profile
from advisor.validation import Request
from advisor.versions import at_least, cuda_tag, vkey

PYTHON_TAG = "3.10"


def _python_tag(release: Release) -> str:
    low, high = release.python or (PYTHON_TAG, PYTHON_TAG)
    chosen = PYTHON_TAG if vkey(low) <= vkey(PYTHON_TAG) <= vkey(high) else low
    return chosen.replace(".", "")


def install_line(opt: Option) -> str:
    """How to install this release built for the CUDA version the driver supports."""
    eng = profile(opt.engine)
    release, install = opt.version.release, eng.install
    if opt.version.variant and install.variant and eng.wheel:
        tag = cuda_tag(opt.version.cuda or "")
        template = release.wheel_url or eng.wheel.url
        wheel = template.format(version=opt.version.version, cuda_nodot=tag[2:], py=_python_tag(release))
        return install.variant.format(wheel_url=wheel, cuda_tag=tag)
    return install.default.format(version=opt.version.version, image=release.image or "")


def _switches(eng: EngineProfile, opt: Option) -> dict[str, Any]:
    """Technique switches the configuration turns on that the release does not turn on by itself."""
    version = opt.version.version
    out: dict[str, Any] = {}
    wanted = {"chunked_prefill": opt.chunked_prefill, "prefix_caching": opt.prefix_caching, "multi_lora": opt.multi_lora}
    for name, on in wanted.items():
        entry = eng.technique(name, version)
        if on and entry and entry.flag and not eng.technique_on(name, version) and not entry.takes_value:
            out[flag_key(entry.flag)] = True
    return out


def engine_flags(req: Request, opt: Option) -> dict[str, Any]:
    """The configuration as the engine's own flag names (without leading dashes, '-' as '_')."""
    eng = profile(opt.engine)
    version = opt.version.version
    plan = opt.plan
    values: dict[str, Any] = {
        "tensor_parallel_size": opt.tp, "pipeline_parallel_size": opt.pp, "dtype": opt.dtype,
        "quantization": opt.quant.kernel or opt.quant.method, "max_model_len": plan.max_model_len,
        "gpu_memory_utilization": plan.gpu_memory_utilization, "max_num_seqs": plan.max_num_seqs,
        "kv_cache_dtype": opt.kv_dtype,
        "max_num_batched_tokens": plan.batched_tokens if opt.chunked_prefill else None,
        "enforce_eager": bool(req.flags.get("enforce_eager", graph_mode(req, opt) == "eager")) if eng.cuda_graphs else None,
    }
    graphs = eng.cuda_graphs
    if (graphs and graphs.reduced and graph_mode(req, opt) == "reduced"
            and not {"enforce_eager", graphs.reduced.key} & set(req.flags)):
        values[graphs.reduced.key] = graphs.reduced.max_batch
    if eng.context_per_slot:
        # the context flag is the whole KV cache, split evenly between the slots: one slot per concurrent
        # request the cache can hold at the workload's length, each as long as the cache allows.
        needed = req.workload.prompt_tokens + req.workload.output_tokens
        slots = max(1, min(plan.max_num_seqs, req.workload.concurrency, plan.kv_tokens // max(1, needed)))
        values["max_num_seqs"] = slots
        values["max_model_len"] = slots * min(plan.max_model_len, plan.kv_tokens // slots)
    if eng.layer_split_value is not None:
        values["pipeline_parallel_size"] = eng.layer_split_value if opt.pp > 1 else None
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = eng.flag(key, version)
        if value is None or name is None:
            continue
        out[flag_key(name)] = value
    out.update(_switches(eng, opt))
    for key, value in opt.attention_flags:  # the fallback attention backend where the flash one cannot run
        name = eng.flag(key, version)
        if name is not None and flag_key(name) not in req.flags:
            out[flag_key(name)] = value
    for key, value in req.flags.items():  # other user-fixed flags are the engine's own: kept as given
        if key not in values:
            out.setdefault(key, value)
    return out


GraphMode = Literal["graphs", "reduced", "eager"]


def graph_headroom(req: Request, opt: Option) -> float:
    """GiB per GPU left outside the memory fraction, where CUDA graphs are captured."""
    return req.gpu.usable_gib * (1 - opt.plan.gpu_memory_utilization)


def graph_mode(req: Request, opt: Option) -> GraphMode:
    """CUDA graphs take memory beyond the gpu_memory_utilization budget (vLLM: "1~3 GiB per GPU"). When the
    headroom outside the budget is below what this model's graphs take (the low end for a dense model, the
    high end for a mixture of experts): capture fewer batch sizes where the release has that flag and it
    saves enough, else run eagerly. Releases that measure graph memory inside the budget need no headroom."""
    eng = profile(opt.engine)
    graphs = eng.cuda_graphs
    version = opt.version.version
    if graphs is None or (graphs.profiled and at_least(version, graphs.profiled.since)):
        return "graphs"
    need, headroom = graphs.extra_gib(req.model.is_moe), graph_headroom(req, opt)
    if headroom >= need:
        return "graphs"
    reduced = graphs.reduced
    if reduced and eng.flag(reduced.key, version) and headroom + reduced.saving_gib >= need:
        return "reduced"
    return "eager"


def _cli(flags: dict[str, Any], eng: EngineProfile, version: str) -> list[str]:
    by_flag_name = {flag_key(n): n for key in eng.flags if (n := eng.flag(key, version))}
    parts: list[str] = []
    for key, value in flags.items():
        flag = by_flag_name.get(key, "--" + key.replace("_", "-"))
        if value is True:
            parts.append(flag)
        elif value is False or value is None:
            continue
        else:
            parts += [flag, str(value)]
    return parts


def _for_version(templates: dict[str, str], version: str) -> str:
    """The template for this release: the earliest `before_X` entry the version is older than, else `default`."""
    cutoffs = sorted((k.removeprefix("before_") for k in templates if k.startswith("before_")), key=vkey)
    for cutoff in cutoffs:
        if not at_least(version, cutoff):
            return templates[f"before_{cutoff}"]
    return templates["default"]


def command_line(req: Request, opt: Option, flags: dict[str, Any]) -> str:
    """Launch command for one replica (replicas > 1: the same on each GPU group, another port)."""
    eng = profile(opt.engine)
    template = _for_version(eng.serve, opt.version.version)
    model = opt.quant.checkpoint_id or req.model.id
    if opt.quant.self_quantize:  # the operator's own quantized copy, produced first (see rationale)
        model = f"./{req.model.id.split('/')[-1]}-{opt.quant.label}"
    base = template.format(model=model, image=opt.version.release.image or "", gguf=gguf_file(req, opt))
    parallel = {flag_key(n) for key in ("tensor_parallel_size", "pipeline_parallel_size") if (n := eng.flag(key, opt.version.version))}
    shown = {k: v for k, v in flags.items() if not (k in parallel and v == 1)}
    if eng.command_flags is not None:
        shown = {k: v for k, v in shown.items() if k in eng.command_flags}
    env = " ".join(f"{k}={v}" for k, v in opt.env)
    if opt.replicas > 1:
        devices = ",".join(str(i) for i in range(opt.gpus_per_replica))
        env = f"CUDA_VISIBLE_DEVICES={devices} {env}".strip()
    parts = [env] if env else []
    parts.append(base)
    parts += [shlex.quote(p) for p in _cli(shown, eng, opt.version.version)]
    return " ".join(parts)


def gguf_file(req: Request, opt: Option) -> str:
    """The GGUF file llama.cpp loads: from a GGUF repository as published, else converted and quantized locally."""
    name = req.model.id.split("/")[-1]
    if opt.quant.method == "gguf":
        return f"{name}/<file>.gguf"
    return f"{name}-{(opt.quant.method or 'f16').upper()}.gguf"


def verify_line(req: Request, opt: Option) -> str:
    """The engine's benchmark command on the request's workload shape."""
    template = _for_version(profile(opt.engine).verify, opt.version.version)
    w = req.workload
    return template.format(model=opt.quant.checkpoint_id or req.model.id, prompt=w.prompt_tokens, output=w.output_tokens,
                           concurrency=w.concurrency, n=max(10 * w.concurrency, 100), gguf=gguf_file(req, opt))


def replicas_note(opt: Option) -> str | None:
    if opt.replicas <= 1:
        return None
    return (f"run {opt.replicas} replicas of {opt.gpus_per_replica} GPU(s) each (set CUDA_VISIBLE_DEVICES per replica, "
            f"one port each) behind a load balancer; each serves ~1/{opt.replicas} of the traffic")


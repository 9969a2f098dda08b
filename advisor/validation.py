"""Turns a raw advisor request (JSON from the CLI or the REST API) into a checked Request.

Runs first on every recommendation. Bad input raises AdvisorInputError(error, hint) with a message
a person can act on; the CLI prints it as {"error", "hint"} and exits 2, the API answers HTTP 400.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from advisor.catalog import Gpu, closest_gpu_names, resolve_gpu
from advisor.model_specs import ModelSpec, resolve_model
from advisor.profiles import engine_id, engine_names, profile
from advisor.versions import vkey

TOP_KEYS = {"gpu", "gpu_count", "cuda", "model", "engine", "engine_version", "max_context", "workload", "sla", "flags"}
WORKLOAD_KEYS = {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}
SLA_KEYS = ("p95_ttft_ms", "p95_tpot_ms", "p95_latency_ms", "min_throughput_tok_s")
INT_FLAGS = {"max_model_len", "max_num_seqs", "tensor_parallel_size", "pipeline_parallel_size", "max_num_batched_tokens"}
DTYPES = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "auto": "auto", "float32": "float32", "float": "float32"}


class AdvisorInputError(ValueError):
    """Invalid advisor input: `error` says what is wrong, `hint` how to fix it."""

    def __init__(self, error: str, hint: str) -> None:
        super().__init__(error)
        self.error = error
        self.hint = hint

    def as_dict(self) -> dict[str, str]:
        return {"error": self.error, "hint": self.hint}


@dataclass(frozen=True)
class Workload:
    prompt_tokens: int
    output_tokens: int
    concurrency: int


@dataclass(frozen=True)
class Sla:
    p95_ttft_ms: float | None = None
    p95_tpot_ms: float | None = None
    p95_latency_ms: float | None = None
    min_throughput_tok_s: float | None = None

    def is_set(self) -> bool:
        return any(getattr(self, k) is not None for k in SLA_KEYS)


@dataclass
class Request:
    gpu: Gpu
    gpu_count: int
    cuda: str | None
    model: ModelSpec
    engine: str | None
    engine_version: str | None
    max_context: int | None
    workload: Workload
    sla: Sla
    flags: dict[str, Any]
    raw_gpu: str
    warnings: list[str] = field(default_factory=list)

    def normalised(self) -> dict[str, Any]:
        """The request as the advisor understood it (echoed in the response's `input`)."""
        return {
            "gpu": self.gpu.name, "gpu_id": self.gpu.id, "gpu_count": self.gpu_count, "cuda": self.cuda,
            "model": self.model.id, "engine": self.engine, "engine_version": self.engine_version,
            "max_context": self.max_context, "workload": self.workload.__dict__,
            "sla": {k: getattr(self.sla, k) for k in SLA_KEYS}, "flags": dict(self.flags),
        }


LIMITS = {"gpu_count": 1024, "workload.prompt_tokens": 1_048_576, "workload.output_tokens": 131_072,
          "workload.concurrency": 4096, "max_context": 10_485_760}


def _positive_int(value: Any, name: str, hint: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise AdvisorInputError(f"{name} must be a positive integer, got {value!r}", hint)
    try:
        number = int(value) if isinstance(value, float) and value.is_integer() else int(str(value).strip())
    except ValueError as exc:
        raise AdvisorInputError(f"{name} must be a positive integer, got {value!r}", hint) from exc
    if number <= 0:
        raise AdvisorInputError(f"{name} must be a positive integer, got {value!r}", hint)
    if number > LIMITS.get(name, number):
        raise AdvisorInputError(f"{name}={number} is beyond what the advisor plans for (at most {LIMITS[name]})", hint)
    return number


def _positive_number(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise AdvisorInputError(f"{name} must be a positive number, got {value!r}", f"set {name} to e.g. 500 or null") from exc
    if number <= 0 or isinstance(value, bool):
        raise AdvisorInputError(f"{name} must be a positive number, got {value!r}", f"set {name} to e.g. 500 or null")
    return number


def _gpu(raw: dict[str, Any]) -> Gpu:
    name = raw.get("gpu")
    if not name or not isinstance(name, str):
        raise AdvisorInputError("'gpu' is required", 'give the GPU model as nvidia-smi names it, e.g. "gpu": "A100-SXM4-40GB"')
    gpu = resolve_gpu(name)
    if gpu is None:
        raise AdvisorInputError(f"unknown GPU '{name}'", "closest known GPUs: " + ", ".join(closest_gpu_names(name)))
    return gpu


def _model(raw: dict[str, Any]) -> tuple[ModelSpec, list[str]]:
    model_id = raw.get("model")
    if not model_id or not isinstance(model_id, str):
        raise AdvisorInputError("'model' is required", 'give a Hugging Face model id, e.g. "model": "meta-llama/Llama-3.1-8B-Instruct"')
    spec, warnings = resolve_model(model_id)
    if spec is None:
        raise AdvisorInputError(
            f"unknown model '{model_id}' and no parameter count in its name",
            "use a Hugging Face id from the catalog, or one whose name carries its size (e.g. 'org/Name-13B')")
    return spec, warnings


def _engine(raw: dict[str, Any]) -> tuple[str | None, str | None, list[str]]:
    name, version = raw.get("engine"), raw.get("engine_version")
    if not name:
        if version:
            raise AdvisorInputError("'engine_version' given without 'engine'", "name the engine the version belongs to, e.g. \"engine\": \"vllm\"")
        return None, None, []
    eid = engine_id(str(name))
    if eid is None:
        raise AdvisorInputError(f"unknown engine '{name}'", "known engines: " + ", ".join(engine_names()))
    if not version:
        return eid, None, []
    version = str(version).strip().lstrip("v")
    if not vkey(version):
        raise AdvisorInputError(f"engine_version '{version}' is not a version number", "use the release number, e.g. \"0.6.3\"")
    eng = profile(eid)
    if eng.release(version) is not None:
        return eid, version, []
    before, after = eng.nearest_releases(version)
    if eng.rolling_release:
        newest = eng.releases[-1].version
        return eid, version, [f"{eng.name} {version} is not in the catalog; facts of build {newest} are used (unverified for {version})"]
    if before is None:
        nearest = ", ".join(r.version for r in eng.releases[:3])
        raise AdvisorInputError(f"{eng.name} {version} is older than every catalogued release, so nothing is known about it",
                                f"nearest known releases: {nearest}")
    later = f"; the next catalogued release is {after.version}" if after else ""
    return eid, version, [f"{eng.name} {version} is not in the catalog: its facts are taken from {before.version}, the nearest "
                          f"earlier catalogued release, and are unverified for {version}{later}"]


def _section(raw: dict[str, Any], name: str, keys: Any, example: str) -> dict[str, Any]:
    """A nested object of the request (workload, sla): must be an object with known fields only."""
    given = raw.get(name) or {}
    if not isinstance(given, dict):
        raise AdvisorInputError(f"'{name}' must be an object", f"e.g. {example}")
    unknown = set(given) - set(keys)
    if unknown:
        raise AdvisorInputError(f"unknown {name} field(s): {', '.join(sorted(unknown))}", f"{name} takes: " + ", ".join(keys))
    return given


def _workload(raw: dict[str, Any]) -> tuple[Workload, list[str]]:
    given = _section(raw, "workload", WORKLOAD_KEYS, '{"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}')
    values = {k: _positive_int(given.get(k, d), f"workload.{k}", f"e.g. {d}") for k, d in WORKLOAD_KEYS.items()}
    missing = [k for k in WORKLOAD_KEYS if given.get(k) is None]
    notes = [f"workload not fully given; assumed {', '.join(f'{k}={values[k]}' for k in missing)}"] if missing else []
    return Workload(**values), notes


def _sla(raw: dict[str, Any]) -> Sla:
    given = _section(raw, "sla", SLA_KEYS, '{"p95_latency_ms": 500}')
    return Sla(**{k: (_positive_number(given[k], f"sla.{k}") if given.get(k) is not None else None) for k in SLA_KEYS})


def _flags(raw: dict[str, Any], gpu_count: int) -> dict[str, Any]:
    given = raw.get("flags") or {}
    if not isinstance(given, dict):
        raise AdvisorInputError("'flags' must be an object of engine flags", 'e.g. {"max_model_len": 8192}')
    flags: dict[str, Any] = {}
    for key, value in given.items():
        name = key.lstrip("-").replace("-", "_")
        if name in INT_FLAGS:
            flags[name] = _positive_int(value, f"flags.{name}", "an integer")
        elif name == "gpu_memory_utilization":
            number = _positive_number(value, "flags.gpu_memory_utilization")
            if number > 1:
                raise AdvisorInputError("flags.gpu_memory_utilization must be a fraction in (0, 1]", "e.g. 0.9")
            flags[name] = number
        elif name == "dtype":
            if str(value).lower() not in DTYPES:
                raise AdvisorInputError(f"flags.dtype '{value}' is not a dtype", "use float16, bfloat16 or auto")
            flags[name] = DTYPES[str(value).lower()]
        else:
            flags[name] = value
    parallel = flags.get("tensor_parallel_size", 1) * flags.get("pipeline_parallel_size", 1)
    if parallel > gpu_count:
        raise AdvisorInputError(
            f"tensor_parallel_size x pipeline_parallel_size = {parallel} needs more than the {gpu_count} GPU(s) given",
            "raise gpu_count or lower the parallel sizes")
    return flags


def parse_request(raw: Any) -> Request:
    """Validate and normalise; raises AdvisorInputError on anything a person must fix."""
    if not isinstance(raw, dict):
        raise AdvisorInputError("the request must be a JSON object", 'e.g. {"gpu": "A100-SXM4-40GB", "model": "meta-llama/Llama-3.1-8B-Instruct"}')
    unknown = set(raw) - TOP_KEYS
    if unknown:
        raise AdvisorInputError(f"unknown field(s): {', '.join(sorted(unknown))}", "accepted fields: " + ", ".join(sorted(TOP_KEYS)))
    gpu = _gpu(raw)
    gpu_count = _positive_int(raw.get("gpu_count", 1), "gpu_count", "the number of GPUs of that model on the node(s), e.g. 1")
    cuda = raw.get("cuda")
    if cuda is not None:
        cuda = str(cuda).strip()
        if not re.fullmatch(r"\d+(\.\d+){0,2}", cuda):
            raise AdvisorInputError(f"cuda '{cuda}' is not a CUDA version", "give the 'CUDA Version' nvidia-smi prints, e.g. \"12.2\"")
    model, model_warnings = _model(raw)
    engine, version, engine_warnings = _engine(raw)
    max_context = raw.get("max_context")
    if max_context is not None:
        max_context = _positive_int(max_context, "max_context", "the longest prompt+output you must serve, e.g. 8192")
    workload, workload_notes = _workload(raw)
    return Request(
        gpu=gpu, gpu_count=gpu_count, cuda=cuda, model=model, engine=engine, engine_version=version,
        max_context=max_context, workload=workload, sla=_sla(raw), flags=_flags(raw, gpu_count), raw_gpu=raw["gpu"],
        warnings=[*model_warnings, *engine_warnings, *workload_notes, *(f"GPU numbers estimated: {e}" for e in gpu.estimated)],
    )

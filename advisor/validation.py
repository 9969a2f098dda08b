"""Turns a raw advisor request (JSON from the CLI, the REST API or the form) into a checked Request.

Runs first on every recommendation. The shape and the limits are `advisor.request.AdviceRequest`'s;
this module turns its validation errors into one AdvisorInputError(error, hint) a person can act on,
then resolves the names (GPU, model, engine and release) against the catalogs. The CLI prints the
error as {"error", "hint"} and exits 2, the API answers HTTP 400.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from advisor import hub, local_models
from advisor.catalog import Gpu, closest_gpu_names, resolve_gpu
from advisor.model_specs import ModelSpec, catalog_model, closest_model_ids, derived_model, spec_from_config
from advisor.profiles import engine_id, engine_names, profile
from advisor.request import DEFAULT_WORKLOAD, AdviceRequest, FlagsIn, SlaIn, WorkloadIn

SLA_KEYS = tuple(SlaIn.model_fields)


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
    """The workload the simulator runs; `request_rate` None means a closed loop of `concurrency` users."""

    prompt_tokens: int
    output_tokens: int
    concurrency: int
    shared_prefix_tokens: int = 0
    lora_adapters: int = 0
    request_rate: float | None = None


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
            "max_context": self.max_context, "workload": asdict(self.workload),
            "sla": {k: getattr(self.sla, k) for k in SLA_KEYS}, "flags": dict(self.flags),
        }


_SECTIONS: dict[str, type[BaseModel]] = {"workload": WorkloadIn, "sla": SlaIn, "flags": FlagsIn}


def _field_info(loc: tuple[int | str, ...]) -> dict[str, Any]:
    """Description, examples and the hint/error overrides of the field at `loc`."""
    model: type[BaseModel] = AdviceRequest
    info = None
    for part in loc:
        if not isinstance(part, str) or part not in model.model_fields:
            return {}
        info = model.model_fields[part]
        nested = _SECTIONS.get(part) if model is AdviceRequest else None
        if nested is not None and part != loc[-1]:
            model = nested
    if info is None:
        return {}
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return {"examples": info.examples or [], **extra}


def _hint(loc: tuple[int | str, ...]) -> str:
    info = _field_info(loc)
    if "x-hint" in info:
        return str(info["x-hint"])
    if info.get("examples"):
        return f"e.g. {info['examples'][0]}"
    return "see the advisor request in the API schema (/api/schema/)"


def _input_error(exc: ValidationError) -> AdvisorInputError:
    """The first validation error, in words a person can act on."""
    err = exc.errors(include_url=False)[0]
    loc = tuple(err["loc"])
    name = ".".join(str(p) for p in loc)
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    shown = repr(value)
    shown = shown if len(shown) <= 48 else shown[:40] + "…"
    custom = _field_info(loc).get("x-error")
    if kind == "missing":
        return AdvisorInputError(f"'{name}' is required", _hint(loc))
    if kind == "extra_forbidden":
        section = loc[0] if len(loc) > 1 else None
        fields = _SECTIONS[str(section)].model_fields if section else AdviceRequest.model_fields
        where = f"{section} field(s)" if section else "field(s)"
        takes = f"{section} takes: " if section else "accepted fields: "
        return AdvisorInputError(f"unknown {where}: {loc[-1]}", takes + ", ".join(fields))
    if kind in {"model_type", "dict_type"} and not loc:
        return AdvisorInputError("the request must be a JSON object",
                                 'e.g. {"gpu": "A100-SXM4-40GB", "model": "meta-llama/Llama-3.1-8B-Instruct"}')
    if kind in {"model_type", "dict_type"}:
        return AdvisorInputError(f"'{name}' must be an object", _hint(loc) if loc[0] != "flags" else 'e.g. {"max_model_len": 8192}')
    if kind in {"less_than_equal", "less_than"}:
        if custom:
            return AdvisorInputError(f"{name} {custom}, got {shown}", _hint(loc))
        return AdvisorInputError(f"{name}={shown} is beyond what the advisor plans for (at most {ctx.get('le', ctx.get('lt'))})",
                                 _hint(loc))
    if kind in {"greater_than", "greater_than_equal"}:
        bound = f"at least {ctx['ge']}" if "ge" in ctx else f"more than {ctx['gt']}"
        return AdvisorInputError(f"{name} must be {custom or bound}, got {shown}", _hint(loc))
    if kind == "string_pattern_mismatch" and custom:
        return AdvisorInputError(f"{name} {shown} {custom}", _hint(loc))
    if kind == "string_too_long":
        return AdvisorInputError(f"{name} is longer than {ctx.get('max_length')} characters", _hint(loc))
    if kind in {"finite_number"}:
        return AdvisorInputError(f"{name} must be a finite number, got {shown}", _hint(loc))
    if kind.startswith("int_") or kind.startswith("float_") or kind == "string_type":
        what = {"int": "an integer", "flo": "a number", "str": "text"}[kind[:3]]
        return AdvisorInputError(f"{name} must be {what}, got {shown}", _hint(loc))
    message = str(err["msg"]).removeprefix("Value error, ")
    return AdvisorInputError(f"{name}: {message}" if name else message, _hint(loc))


def _gpu(name: str) -> Gpu:
    gpu = resolve_gpu(name)
    if gpu is None:
        raise AdvisorInputError(f"unknown GPU '{name}'", "closest known GPUs: " + ", ".join(closest_gpu_names(name)))
    return gpu


def _server_model_dirs() -> list[Path]:
    from django.conf import settings  # noqa: PLC0415 - the advisor core runs without Django too

    return [Path(p) for p in getattr(settings, "ADVISOR_MODEL_DIRS", [])]


def _from_config(model_id: str, config: dict[str, Any], parameters: dict[str, int], source: str,
                 origin: str = "the Hugging Face Hub") -> tuple[ModelSpec, list[str]]:
    try:
        return spec_from_config(model_id, config, parameters, source, origin)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise AdvisorInputError(f"the config.json of '{model_id}' lacks what sizing needs ({exc})",
                                "closest known ids: " + ", ".join(closest_model_ids(model_id))) from None


def _model(model_id: str, given: dict[str, Any] | None, any_path: bool) -> tuple[ModelSpec, list[str]]:
    """The request's own config, a local path, the catalog's spec, the Hugging Face Hub's (cached),
    aiconfigurator-core's bundled config when the Hub is unreachable, else a derived catalog checkpoint."""
    try:
        if given is not None:
            return _from_config(model_id, local_models.request_config(given), {}, '"model_config" in the request',
                                "the config.json given in the request")
        if local_models.is_path(model_id):
            config, source = local_models.read_path(model_id, None if any_path else _server_model_dirs())
            return _from_config(model_id, config, {}, source, "a local config.json")
    except local_models.LocalConfigError as exc:
        raise AdvisorInputError(str(exc), exc.hint) from None
    exact = catalog_model(model_id)
    if exact is not None:
        return exact, []
    try:
        card = hub.model_card(model_id)
    except hub.HubUnavailable as exc:
        bundled = local_models.bundled_config(model_id) if exc.reason == "offline" else None
        if bundled is not None:
            spec, notes = _from_config(model_id, bundled[0], {}, bundled[1], "a config.json bundled with aiconfigurator-core")
            return spec, [*notes, f"{exc.detail}: aiconfigurator-core's bundled copy of its config.json answered"]
        derived, warnings = derived_model(model_id)
        if derived is not None:
            return derived, [*warnings, f"{exc.detail}: the shape is borrowed, not read"]
        hint = "closest known ids: " + ", ".join(closest_model_ids(model_id))
        if exc.reason == "gated":
            hint = "set HF_TOKEN to a token with access to the repo, or use one of the " + hint
        elif exc.reason == "offline":
            hint = f"set HF_ENDPOINT to a reachable Hub or mirror, {local_models.ROUTES}, or use one of the " + hint
        raise AdvisorInputError(f"unknown model '{model_id}': it is not in the catalog and {exc.detail}", hint) from None
    return _from_config(model_id, card.config, card.parameters, card.source)


def _engine(name: str | None, version: str | None) -> tuple[str | None, str | None, list[str]]:
    if not name:
        if version:
            raise AdvisorInputError("'engine_version' given without 'engine'", "name the engine the version belongs to, e.g. \"engine\": \"vllm\"")
        return None, None, []
    eid = engine_id(name)
    if eid is None:
        raise AdvisorInputError(f"unknown engine '{name}'", "known engines: " + ", ".join(engine_names()))
    if not version:
        return eid, None, []
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


def _workload(given: WorkloadIn) -> tuple[Workload, list[str]]:
    values = {k: getattr(given, k) or default for k, default in DEFAULT_WORKLOAD.items()}
    missing = [k for k in DEFAULT_WORKLOAD if getattr(given, k) is None]
    notes = [f"workload not fully given; assumed {', '.join(f'{k}={values[k]}' for k in missing)}"] if missing else []
    workload = Workload(**values, shared_prefix_tokens=given.shared_prefix_tokens, lora_adapters=given.lora_adapters,
                        request_rate=given.request_rate)
    return workload, notes


def _flags(given: FlagsIn, gpu_count: int) -> dict[str, Any]:
    flags = given.fixed()
    parallel = int(flags.get("tensor_parallel_size") or 1) * int(flags.get("pipeline_parallel_size") or 1)
    if parallel > gpu_count:
        raise AdvisorInputError(
            f"tensor_parallel_size x pipeline_parallel_size = {parallel} needs more than the {gpu_count} GPU(s) given",
            "raise gpu_count or lower the parallel sizes")
    return flags


def parse_request(raw: Any, *, any_path: bool = False) -> Request:
    """Validate and normalise; raises AdvisorInputError on anything a person must fix.

    `any_path`: a model path may name any folder on this machine (the CLI, run by the model's owner);
    otherwise only folders below ADVISOR_MODEL_DIRS (the web form and the API)."""
    try:
        checked = AdviceRequest.model_validate(raw)
    except ValidationError as exc:
        raise _input_error(exc) from None
    gpu = _gpu(checked.gpu)
    model, model_warnings = _model(checked.model, checked.hf_config, any_path)
    engine, version, engine_warnings = _engine(checked.engine, checked.engine_version)
    workload, workload_notes = _workload(checked.workload)
    return Request(
        gpu=gpu, gpu_count=checked.gpu_count, cuda=checked.cuda, model=model, engine=engine, engine_version=version,
        max_context=checked.max_context, workload=workload, sla=Sla(**checked.sla.model_dump()),
        flags=_flags(checked.flags, checked.gpu_count), raw_gpu=checked.gpu,
        warnings=[*model_warnings, *engine_warnings, *workload_notes, *(f"GPU numbers estimated: {e}" for e in gpu.estimated)],
    )

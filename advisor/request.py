"""The advisor request as one Pydantic model: the shape, the limits and the documentation of every field.

Read by everything that takes an advisor request — `advisor.validation` (which resolves names against
the catalogs after this model has checked the shape), the REST API and its OpenAPI schema, the `advise`
command's flags and the browser form — so a limit or a field description lives here once. The limits
keep one request cheap: bounded string lengths (the GPU-name matcher and the model lookup never see
kilobytes), numeric ranges the planner is built for, finite numbers only (no NaN or infinity), and a
bounded number of engine flags.
"""
from __future__ import annotations

import math
from functools import cache
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

MAX_FLAGS = 32
DTYPES = {"float16": "float16", "half": "float16", "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16",
          "auto": "auto", "float32": "float32", "float": "float32"}


def _not_bool(value: object) -> object:
    """JSON true/false are not numbers here (Python would read them as 1 and 0)."""
    if isinstance(value, bool):
        raise ValueError("must be a number, not true/false")
    return value


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _doc(example: object, description: str | None = None, hint: str | None = None, default: object = None) -> Any:
    """Field documentation: an example (the error hint's "e.g."), a description and an optional hint."""
    return Field(default=default, examples=[example], description=description,
                 json_schema_extra={"x-hint": hint} if hint else None)


NOT_BOOL = BeforeValidator(_not_bool)
# Bounds sit before the validator in each Annotated so that the JSON schema shows them as minimum/maximum.
Count1 = Annotated[int, Field(ge=1, le=1024), NOT_BOOL]
Tokens = Annotated[int, Field(ge=1, le=10_485_760), NOT_BOOL]
Text = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]
FlagValue = Annotated[
    None | bool | Annotated[int, Field(ge=-(10**12), le=10**12)] | Annotated[float, Field(allow_inf_nan=False)]
    | Annotated[str, StringConstraints(max_length=200)],
    BeforeValidator(_finite),
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WorkloadIn(_Section):
    """What the deployment serves. Fields left out are assumed (and the answer says so)."""

    prompt_tokens: Annotated[int, Field(ge=1, le=1_048_576), NOT_BOOL] | None = _doc(1024, "prompt tokens per request")
    output_tokens: Annotated[int, Field(ge=1, le=131_072), NOT_BOOL] | None = _doc(256, "output tokens per request")
    concurrency: Annotated[int, Field(ge=1, le=4096), NOT_BOOL] | None = _doc(
        16, "concurrent requests: a closed loop of this many users, each sending its next "
                                 "request when the last one finishes (unless request_rate is given)")
    shared_prefix_tokens: Annotated[int, Field(ge=0, le=1_048_576), NOT_BOOL] = _doc(
        512, default=0, description="tokens every request starts with (system prompt, few-shot examples); prefix caching reuses them")
    lora_adapters: Annotated[int, Field(ge=0, le=4096), NOT_BOOL] = _doc(4, "distinct LoRA adapters served", default=0)
    request_rate: Annotated[float, Field(gt=0, le=100_000, allow_inf_nan=False), NOT_BOOL] | None = _doc(
        2.0, description="requests per second arriving as a Poisson process (an open loop: arrivals do not wait "
                    "for answers, so concurrency is not used); null: a closed loop of `concurrency` users")

    @model_validator(mode="after")
    def _prefix_within_prompt(self) -> WorkloadIn:
        prompt = self.prompt_tokens or DEFAULT_WORKLOAD["prompt_tokens"]
        if self.shared_prefix_tokens > prompt:
            raise ValueError(f"shared_prefix_tokens ({self.shared_prefix_tokens}) cannot exceed prompt_tokens ({prompt})")
        return self


DEFAULT_WORKLOAD = {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}


class SlaIn(_Section):
    """Service-level targets at the 95th percentile; each is optional."""

    p95_ttft_ms: Annotated[float, Field(gt=0, le=1e7, allow_inf_nan=False), NOT_BOOL] | None = _doc(500, "time to first token")
    p95_tpot_ms: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False), NOT_BOOL] | None = _doc(50, "time per output token")
    p95_latency_ms: Annotated[float, Field(gt=0, le=1e8, allow_inf_nan=False), NOT_BOOL] | None = _doc(
        5000, "end-to-end latency")
    min_throughput_tok_s: Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False), NOT_BOOL] | None = _doc(
        1000, "output tokens per second over all replicas")


class FlagsIn(BaseModel):
    """Engine flags the user has already fixed: the advisor keeps them and sizes around them.

    The flags the advisor reasons about are typed here; any other flag is the engine's own and is passed
    through unchanged (a scalar value)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, FlagValue] = Field(init=False)

    max_model_len: Tokens | None = _doc(8192)
    max_num_seqs: Annotated[int, Field(ge=1, le=65_536), NOT_BOOL] | None = _doc(64)
    max_num_batched_tokens: Tokens | None = _doc(2048)
    tensor_parallel_size: Count1 | None = _doc(1, hint="an integer that divides the GPU count")
    pipeline_parallel_size: Count1 | None = _doc(1, hint="an integer that divides the GPU count")
    gpu_memory_utilization: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False), NOT_BOOL] | None = Field(
        default=None, examples=[0.9], json_schema_extra={"x-error": "must be a fraction in (0, 1]", "x-hint": "e.g. 0.9"})
    dtype: str | None = Field(default=None, max_length=20, examples=["bfloat16"],
                              json_schema_extra={"x-hint": "use float16, bfloat16 or auto"})
    kv_cache_dtype: str | None = Field(default=None, max_length=20, examples=["fp8"])
    quantization: str | None = Field(default=None, max_length=40, examples=["awq"])
    enforce_eager: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _engine_spellings(cls, value: object) -> object:
        """CLI spellings ("--max-model-len") are the same flag as "max_model_len"; at most MAX_FLAGS flags."""
        if not isinstance(value, dict):
            return value
        if len(value) > MAX_FLAGS:
            raise ValueError(f"at most {MAX_FLAGS} flags")
        out: dict[str, object] = {}
        for key, item in value.items():
            name = str(key).lstrip("-").replace("-", "_")
            if not 0 < len(name) <= 64:
                raise ValueError(f"flag names are 1-64 characters, got {str(key)[:70]!r}")
            out[name] = item
        return out

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.lower() not in DTYPES:
            raise ValueError(f"'{value}' is not a dtype")
        return DTYPES[value.lower()]

    def fixed(self) -> dict[str, Any]:
        """The flags the user set, typed ones normalised, others as given."""
        return self.model_dump(exclude_unset=True)


class AdviceRequest(BaseModel):
    """The advisor request of DESIGN.md. Only `gpu` and `model` are required."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False, json_schema_extra={"examples": [{
        "gpu": "A100-SXM4-40GB", "gpu_count": 1, "cuda": "12.2", "model": "meta-llama/Llama-3.1-8B-Instruct",
        "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}, "sla": {"p95_latency_ms": 8000}}]})

    gpu: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)] = Field(
        examples=["A100-SXM4-40GB"], description="GPU model as nvidia-smi names it",
        json_schema_extra={"x-hint": 'give the GPU model as nvidia-smi names it, e.g. "gpu": "A100-SXM4-40GB"'})
    gpu_count: Count1 = _doc(1, "GPUs of that model on the node(s)", default=1)
    cuda: Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^\d{1,2}(\.\d{1,2}){0,2}$")] | None = Field(
        default=None, examples=["12.4"], description="the CUDA version the driver supports ('CUDA Version' in nvidia-smi)",
        json_schema_extra={"x-error": "is not a CUDA version", "x-hint": "give the 'CUDA Version' nvidia-smi prints, e.g. \"12.2\""})
    model: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)] = Field(
        examples=["meta-llama/Llama-3.1-8B-Instruct"],
        description="Hugging Face model id, or the path of a local model folder or its config.json",
        json_schema_extra={"x-hint": 'give a Hugging Face model id, e.g. "model": "meta-llama/Llama-3.1-8B-Instruct"'})
    # `model_config` is pydantic's own attribute name, hence the alias
    hf_config: dict[str, Any] | None = Field(
        default=None, alias="model_config", examples=[{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096}],
        description="the model's config.json as an object, for a model neither the catalog nor the Hub can give "
                    "(a private or air-gapped checkpoint); `model` then names it")
    engine: Annotated[str, StringConstraints(strip_whitespace=True, max_length=40)] | None = Field(
        default=None, examples=["vllm"], description="engine to use (null: let the advisor choose)")
    engine_version: Annotated[str, StringConstraints(strip_whitespace=True, max_length=40,
                                                     pattern=r"^[vb]?\d{1,6}(\.[0-9A-Za-z]{1,16}){0,5}$")] | None = Field(
        default=None, examples=["0.6.3"], description="engine release (null: the newest this host can run)",
        json_schema_extra={"x-error": "is not a version number", "x-hint": 'use the release number, e.g. "0.6.3"'})
    max_context: Tokens | None = _doc(8192, "the longest prompt+output you must serve")
    workload: WorkloadIn = Field(default_factory=WorkloadIn)
    sla: SlaIn = Field(default_factory=SlaIn)
    flags: FlagsIn = Field(default_factory=FlagsIn)

    @field_validator("engine", "engine_version", "cuda", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        """A blank string means "not given"; a version typed as a JSON number (12.4) is read as text."""
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return str(value)
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("engine_version", mode="after")
    @classmethod
    def _plain_version(cls, value: str | None) -> str | None:
        return value.removeprefix("v") if value else value


def _openapi_30(node: Any, defs: dict[str, Any]) -> Any:
    """Pydantic's JSON Schema as OpenAPI 3.0 wants it: definitions inlined, `null` in a union as
    `nullable`, the first of `examples` as `example`, exclusive bounds as booleans."""
    if isinstance(node, list):
        return [_openapi_30(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _openapi_30(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out = {k: _openapi_30(v, defs) for k, v in node.items() if k not in ("$defs", "examples")}
    if node.get("examples"):
        out["example"] = node["examples"][0]
    for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(out.get(bound), int | float) and not isinstance(out[bound], bool):
            out[plain], out[bound] = out[bound], True
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        out.pop("anyOf")
        out.update(rest[0] if len(rest) == 1 else {"anyOf": rest})
        out["nullable"] = True
    return out


@cache
def openapi_schema() -> dict[str, Any]:
    """The OpenAPI 3.0 schema of the request body (the API documents it, the form reads its bounds)."""
    schema = AdviceRequest.model_json_schema()
    return dict(_openapi_30(schema, schema.get("$defs", {})))

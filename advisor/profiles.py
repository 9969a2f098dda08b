"""Engine profiles: one typed, validated data file per inference engine (advisor/catalog/engines/*.json).

Loaded once per process, on the first recommendation or the first call from another app (the
techniques in the ontology read `technique_flag`). Everything the advisor knows about an engine lives
in its profile — releases with their CUDA builds, kernels, attention backends, flag names, defaults
and the version range of every capability, each with its public source — so adding an engine or a
release is a data change. Unknown keys are load errors: a misspelt field must never be silently
ignored (that is how catalog facts used to go unread).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Literal, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from advisor.versions import at_least, at_most, vkey
from ontology.selectors import MAX_QUOTE, techniques

ENGINES_DIR = Path(__file__).resolve().parent / "catalog" / "engines"

Url = Annotated[str, StringConstraints(pattern=r"^https://\S+$", max_length=500)]
Quote = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUOTE)]
Version = Annotated[str, StringConstraints(pattern=r"^b?[0-9][0-9A-Za-z.+-]{0,31}$")]
Cc = Annotated[str, StringConstraints(pattern=r"^\d{1,2}\.\d$")]


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
    return pattern


# A regular expression in catalog data (failure signatures, quantities, switches): refused on load if it
# does not compile, so a typo in the data stops start-up instead of a diagnose request.
Pattern = Annotated[str, AfterValidator(_compiles)]
Day = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")]
TechniqueName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{1,60}$")]


class ProfileError(ValueError):
    """An engine profile that does not validate: names the file and the offending field."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fact(_Data):
    """A statement with the public page it comes from (and a short quote when one says it best)."""

    source: Url
    quote: Quote | None = None


class Span(_Data):
    """A release range; `since`/`until` are inclusive and None means unbounded."""

    since: Version | None = None
    until: Version | None = None

    def covers(self, version: str) -> bool:
        return at_least(version, self.since) and at_most(version, self.until)


class DtypeRule(Fact):
    min_cc: Cc


class TpAlignment(Fact):
    multiple: int = Field(gt=0)


class ActDtypes(Fact):
    allowed: list[str] = Field(min_length=1)


class Kernel(Span, Fact):
    """A faster kernel the engine picks for a quantization method on a GPU family and release."""

    name: str
    min_cc: Cc
    min_cc_source: Url | None = None


class WeightOnly(Fact):
    """From release `since`, GPUs of at least `min_cc` run the method's weights with 16-bit math (a weight-only
    kernel such as FP8 Marlin W8A16) where they lack native kernels; the floor drops as kernels widen."""

    min_cc: Cc
    since: Version


class Quantization(Span, Fact):
    """One weight-quantization method: the GPUs and releases that have kernels for it."""

    min_cc: Cc
    bits: float = Field(gt=0, le=16)
    compute: Literal["fp16", "int8", "fp8"] = Field(default="fp16", description="math precision on GPUs with native kernels")
    checkpoint: bool
    requested_only: bool = False
    report_as: str | None = None
    online_needs_full_weights: bool = False
    online_source: Url | None = None
    online_quote: Quote | None = None
    since_source: Url | None = Field(default=None, description="the page that dates `since` when `source` does not")
    since_quote: Quote | None = None
    weight_only: list[WeightOnly] = Field(default_factory=list, description="oldest first")
    tp_alignment: TpAlignment | None = None
    act_dtypes: ActDtypes | None = None
    kernels: list[Kernel] = Field(default_factory=list)

    @model_validator(mode="after")
    def _weight_only_in_order(self) -> Quantization:
        if [vkey(w.since) for w in self.weight_only] != sorted(vkey(w.since) for w in self.weight_only):
            raise ValueError("weight_only entries must be listed oldest first")
        return self

    def weight_only_at(self, version: str) -> WeightOnly | None:
        """The weight-only floor in force at this release (the newest entry up to it), or None."""
        return next((w for w in reversed(self.weight_only) if at_least(version, w.since)), None)


class KvCacheDtype(Span, Fact):
    min_cc: Cc | None = None


class Backend(Span, Fact):
    """An attention backend, the GPUs it runs on and the releases that ship it (`until_source`: where its
    removal is announced)."""

    min_cc: Cc
    until_source: Url | None = None
    until_quote: Quote | None = None


class Softcap(Fact):
    """Attention logit soft-capping (Gemma 2): which backends implement it from which release.

    `flash_attn_since` None: every catalogued release's flash backend has it. `xformers_since` None: the engine has no fallback backend with soft-capping, so a GPU without the
    flash backend cannot serve such a model in any release (TGI: FlashAttention-2 only)."""

    flash_attn_since: Version | None = None
    xformers_since: Version | None = None
    xformers_source: Url | None = None


class FallbackFlag(Span, Fact):
    """The engine flag (a key of its flag table, spelled per release) and value that select the fallback backend
    where the flash backend cannot run: an engine that does not fall back by itself crashes without it."""

    key: str
    value: str | bool


class Attention(_Data):
    backends: dict[str, Backend]
    softcap: Softcap | None = None
    flash_backend: str = "FLASH_ATTN"
    flash_name: str = Field(default="FlashAttention-2", description="how the rationale names the flash backend")
    backend_env: str | None = None
    fallback_flags: list[FallbackFlag] = Field(default_factory=list)


class ModelSupport(Fact):
    since: Version


class FlagName(Span):
    """The engine's spelling of a flag in a release range (flags get renamed and removed)."""

    name: str = Field(pattern=r"^-{0,2}[A-Za-z0-9][A-Za-z0-9_.-]*$")
    source: Url | None = None


class Technique(Span, Fact):
    """How a serving technique is switched on in this engine: `flag` (None: on without a switch),
    `takes_value` when the flag needs a value (a size, a model) rather than being a bare switch,
    `off_flag` (what turns an on-by-default technique off), the releases that have it, and from
    which release it is on by default."""

    flag: str | None
    takes_value: bool = False
    off_flag: str | None = None
    default_on_since: Version | None = None


class ReducedCapture(Fact):
    """A release flag (`key` in the flag table) that captures graphs only up to `max_batch`, saving at least
    `saving_gib` of graph memory: the alternative to eager mode where the release has the flag."""

    key: str
    max_batch: int = Field(gt=0)
    saving_gib: float = Field(gt=0)


class ProfiledGraphs(Fact):
    """From release `since` the engine measures graph memory inside its memory fraction, so graphs no longer
    need headroom outside it."""

    since: Version


class CudaGraphs(Fact):
    """Memory CUDA-graph capture takes beyond the engine's memory fraction: a dense model needs the low end
    of the stated range; a mixture-of-experts model's fused-expert kernels are captured per batch size and
    take the high end (`moe_source`: a thread where only eager mode fitted)."""

    extra_gib_min: float = Field(ge=0)
    extra_gib_max: float = Field(ge=0)
    moe_source: Url | None = None
    moe_quote: Quote | None = None
    reduced: ReducedCapture | None = None
    profiled: ProfiledGraphs | None = None

    def extra_gib(self, mixture_of_experts: bool) -> float:
        return self.extra_gib_max if mixture_of_experts else self.extra_gib_min


class MemoryFraction(_Data):
    """The engine's memory-fraction flag default, and what it is a fraction of."""

    default: float = Field(gt=0, le=1)
    of: Literal["total", "free_after_weights"]
    source: Url | None = None


class Install(_Data):
    default: str
    variant: str | None = None


class Wheel(Fact):
    url: str


class GpuFacts(Protocol):
    """What a default rule reads of a GPU (advisor.catalog.Gpu has these)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def memory_gib(self) -> float: ...


class MemoryDefaults(_Data):
    """Defaults on GPUs with at least `min_memory_gib` of memory whose device name contains none of
    `unless_named` (vLLM chooses its batch defaults from the device's total memory and name)."""

    min_memory_gib: float = Field(gt=0)
    unless_named: list[str] = Field(default_factory=list)
    values: dict[str, float] = Field(min_length=1)

    def applies(self, gpu: GpuFacts) -> bool:
        name = gpu.name.lower()
        return gpu.memory_gib >= self.min_memory_gib and not any(n.lower() in name for n in self.unless_named)


ReleaseField = Literal["date", "cuda", "cuda_variants", "torch", "python", "min_compute_capability", "wheel_url"]


class Release(_Data):
    """One engine release and what ships in it."""

    version: Version
    date: Day | None = None
    cuda: str | None = Field(default=None, pattern=r"^\d+\.\d+$")
    cuda_variants: list[str] = Field(default_factory=list)
    torch: str | None = None
    python: tuple[str, str] | None = None
    min_compute_capability: Cc | None = None
    image: str | None = None
    container: str | None = None
    build: str | None = None
    defaults: dict[str, float] = Field(default_factory=dict)
    gpu_defaults: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="defaults that differ on some GPUs, keyed by the start of the catalog GPU id")
    memory_defaults: list[MemoryDefaults] = Field(
        default_factory=list, description="defaults that follow the GPU's memory size (the first rule that applies)")
    defaults_source: Url | None = None
    defaults_quote: Quote | None = None
    wheel_url: str | None = None
    attention_backends: list[str] = Field(default_factory=list)
    source: Url
    quote: Quote | None = None
    field_sources: dict[ReleaseField, Fact] = Field(
        default_factory=dict, description="the page a field comes from when it is not `source` (a release's facts "
                                          "are often spread over its notes, its assets and its issue threads)")

    @model_validator(mode="after")
    def _defaults_cite(self) -> Release:
        if (self.defaults or self.gpu_defaults or self.memory_defaults) and self.defaults_source is None:
            raise ValueError(f"release {self.version}: defaults need a defaults_source")
        unset = sorted(k for k in self.field_sources if getattr(self, k) in (None, [], ()))
        if unset:
            raise ValueError(f"release {self.version}: field_sources cite fields the release does not set: {unset}")
        return self

    def default_on(self, key: str, gpu: GpuFacts | None) -> float | None:
        """This release's own default for `key` on this GPU, or None when the release does not set one."""
        if gpu is not None:
            for prefix, values in self.gpu_defaults.items():
                if gpu.id.startswith(prefix) and key in values:
                    return values[key]
            for rule in self.memory_defaults:
                if key in rule.values and rule.applies(gpu):
                    return rule.values[key]
        return self.defaults.get(key)

    def source_of(self, field: ReleaseField) -> str:
        """The public page that states this field of the release."""
        fact = self.field_sources.get(field)
        return fact.source if fact else self.source


def _flag_names(value: object) -> object:
    return [{"name": value}] if isinstance(value, str) else value


class FlagAliases(_Data):
    """Other documented spellings of one flag: the short or long option the same parser accepts
    (llama.cpp `-ngl, --gpu-layers, --n-gpu-layers`, vLLM `--tensor-parallel-size, -tp`) and the
    environment variable or API keyword that sets it (`LLAMA_ARG_N_GPU_LAYERS`), as the engine's own
    argument list (`source`) prints them. Read wherever a written flag is compared with a profile key:
    a pasted message's advice (advisor.named_fixes) and the diagnose benchmark's scorer."""

    names: list[Annotated[str, StringConstraints(pattern=r"^-{0,2}[A-Za-z0-9][A-Za-z0-9_.-]*$")]] = Field(min_length=1)
    source: Url


class Switch(Span, Fact):
    """A feature of the engine that a flag turns off (`knob`, a key of the flag table, with `direction` and
    `value`: `--enforce-eager` sets eager mode, `--fit off`, `--enable-chunked-prefill` dropped), read by
    advisor.suspects when a crash names no cause of its own. `default_on`: the engine runs the feature unless
    told not to; `words`: regular expressions for what an error says when the feature is involved, taken from
    the flag's help text; `when`: the feature only runs in that situation (custom all-reduce: tensor
    parallelism). The span is the releases that have the flag.

    A feature an environment variable turns off instead (a backend's code path: llama.cpp's SYCL backend reads
    GGML_SYCL_FA_ONEDNN) names `env` in place of `knob`, with `value` the setting that turns it off; `requires`,
    what the text must say for the feature to run at all (the backend's name); `under`, the flag key of the feature
    it is a path of (flash attention): a command line that turns that flag on turns this path on; `wrapper`, the
    wrapper whose variable it is (ollama's OLLAMA_FLASH_ATTENTION), offered only when the text is that wrapper's."""

    knob: str | None = None
    env: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,60}$")] | None = None
    direction: Literal["set", "unset"]
    value: str | None = None
    feature: str = Field(min_length=3, max_length=80)
    default_on: bool
    words: list[Pattern] = Field(min_length=1)
    when: Literal["tensor_parallel"] | None = None
    requires: Pattern | None = None
    under: str | None = None
    wrapper: str | None = None

    @model_validator(mode="after")
    def _one_switch(self) -> Switch:
        if (self.knob is None) == (self.env is None):
            raise ValueError("a switch names exactly one of `knob` or `env`")
        if self.env is not None and self.value is None:
            raise ValueError(f"switch {self.env} needs the value that turns its feature off")
        return self


class WrapperSetting(_Data):
    """How a wrapper sets one of the engine's flags: an environment variable of the wrapper and/or a per-model option
    of it (ollama's `num_gpu`, set as a Modelfile PARAMETER or in a request's options) or its own command-line flag
    (koboldcpp's `--blasbatchsize` for llama.cpp's batch size), and the wrapper's spelling of
    values that differ from the engine's (llama.cpp `-fa off` is ollama's OLLAMA_FLASH_ATTENTION=0); `source` where
    the wrapper passes the option on, when that is not the wrapper's own source."""

    env: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,60}$")] | None = None
    option: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{1,40}$")] | None = None
    flag: Annotated[str, StringConstraints(pattern=r"^--?[a-z][a-z0-9_-]{1,40}$")] | None = None
    values: dict[str, str] = Field(default_factory=dict)
    source: Url | None = None

    @model_validator(mode="after")
    def _spelt_somewhere(self) -> WrapperSetting:
        if self.env is None and self.option is None and self.flag is None:
            raise ValueError("a wrapper setting names an environment variable, an option or a flag of the wrapper")
        return self


class WrapperDeath(_Data):
    """What a wrapper prints when the engine it runs died (ollama's "llama runner process has terminated"): all a
    pasted log may say of a crash inside the engine. `sources`: where the wrapper writes each wording."""

    pattern: Pattern
    sources: list[Url] = Field(min_length=1)


class Wrapper(Fact):
    """A program that runs the engine under its own settings (ollama runs llama.cpp's llama-server and sets its
    flags from OLLAMA_* variables): a person pasting its errors can only change the engine through those. `requires`:
    what the text shows when it is the wrapper's, besides its report of the engine's death (`died`); `settings`:
    engine flag key -> the wrapper's setting (`source` lists them); `runtime`: the package a release move names when the
    wrapper updates its build of the engine apart from itself (LM Studio's llama.cpp runtime), else the wrapper."""

    name: str = Field(min_length=2, max_length=40)
    requires: Pattern
    died: WrapperDeath | None = None
    runtime: str | None = Field(default=None, min_length=2, max_length=60)
    settings: dict[str, WrapperSetting] = Field(min_length=1)

    @property
    def marks(self) -> tuple[str, ...]:
        """The patterns that make a text this wrapper's: its own names, and its report that the engine died."""
        return (self.requires,) if self.died is None else (self.requires, self.died.pattern)

    def shows(self, text: str) -> bool:
        """True when the text is this wrapper's (`marks`)."""
        return any(re.search(p, text, re.IGNORECASE) for p in self.marks)


class EngineProfile(_Data):
    """Everything the advisor knows about one engine (see the module docstring)."""

    id: str = Field(pattern=r"^[a-z][a-z0-9.-]*$")
    name: str
    rank: int = Field(ge=0, description="preference between otherwise equal options, lowest first")
    aliases: list[str] = Field(default_factory=list)
    docs: Url
    min_compute_capability: Cc
    min_cc_source: Url
    min_cc_quote: Quote | None = None
    dtypes: dict[str, DtypeRule]
    releases: list[Release] = Field(min_length=1)
    rolling_release: bool = False
    wheel: Wheel | None = None
    install: Install
    quantization: dict[str, Quantization] = Field(default_factory=dict)
    kv_cache_dtypes: dict[str, KvCacheDtype] = Field(default_factory=dict)
    attention: Attention | None = None
    models: dict[str, ModelSupport] = Field(default_factory=dict)
    defaults: dict[str, float] = Field(default_factory=dict)
    memory_fraction: MemoryFraction
    block_size: int | None = Field(default=None, gt=0)
    serve: dict[str, str]
    verify: dict[str, str]
    flags: dict[str, list[FlagName]]
    flag_aliases: dict[str, FlagAliases] = Field(default_factory=dict)
    techniques: dict[TechniqueName, list[Technique]] = Field(default_factory=dict)
    switches: list[Switch] = Field(default_factory=list, description="features a flag turns off, the engine's "
                                   "newest default first (advisor.suspects)")
    wrappers: list[Wrapper] = Field(default_factory=list, description="programs that run the engine under their "
                                    "own settings (advisor.wrappers)")
    tp_rule: Fact | None = None
    cuda_rule: Fact | None = None
    cuda_graphs: CudaGraphs | None = None
    tensor_parallel: bool = True
    quantize_tool: str
    own_quantized_format: bool = False
    routine_conversion: bool = False
    context_per_slot: bool = False
    layer_split_value: str | None = None
    command_flags: list[str] | None = None

    @field_validator("flags", mode="before")
    @classmethod
    def _flag_spellings(cls, value: object) -> object:
        """A flag written as one string is one spelling valid in every release."""
        return {k: _flag_names(x) for k, x in value.items()} if isinstance(value, dict) else value

    @field_validator("techniques", mode="before")
    @classmethod
    def _technique_spans(cls, value: object) -> object:
        """One object is one switch for every release; a list holds the switches of successive releases."""
        return {k: [x] if isinstance(x, dict) else x for k, x in value.items()} if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _aliases_name_flags(self) -> EngineProfile:
        unknown = sorted(set(self.flag_aliases) - set(self.flags))
        if unknown:
            raise ValueError(f"flag_aliases name keys the flag table lacks: {unknown}")
        unknown = sorted({k for s in self.switches for k in (s.knob, s.under) if k is not None} - set(self.flags))
        if unknown:
            raise ValueError(f"switches name keys the flag table lacks: {unknown}")
        unknown = sorted({k for w in self.wrappers for k in w.settings} - set(self.flags))
        if unknown:
            raise ValueError(f"wrappers name keys the flag table lacks: {unknown}")
        unknown = sorted({s.wrapper for s in self.switches if s.wrapper} - {w.name for w in self.wrappers})
        if unknown:
            raise ValueError(f"switches name wrappers the profile lacks: {unknown}")
        return self

    @field_validator("serve", "verify")
    @classmethod
    def _templates(cls, value: dict[str, str]) -> dict[str, str]:
        if "default" not in value:
            raise ValueError("needs a 'default' template")
        bad = [k for k in value if k != "default" and not re.fullmatch(r"before_\d[\w.]*", k)]
        if bad:
            raise ValueError(f"template keys must be 'default' or 'before_<version>', got {bad}")
        return value

    @model_validator(mode="after")
    def _sorted_unique_releases(self) -> EngineProfile:
        versions = [r.version for r in self.releases]
        if len(set(versions)) != len(versions):
            raise ValueError(f"duplicate release versions in {self.id}")
        if [vkey(v) for v in versions] != sorted(vkey(v) for v in versions):
            raise ValueError(f"{self.id} releases must be listed oldest first")
        return self

    def release(self, version: str) -> Release | None:
        """The catalogued release with exactly this version."""
        return next((r for r in self.releases if r.version == version), None)

    def nearest_releases(self, version: str) -> tuple[Release | None, Release | None]:
        """The catalogued releases just before and just after `version` (either may be None)."""
        before = [r for r in self.releases if at_most(r.version, version)]
        after = [r for r in self.releases if not at_most(r.version, version)]
        return (before[-1] if before else None, after[0] if after else None)

    def default(self, key: str, version: str | None = None, gpu: GpuFacts | None = None) -> float | None:
        """A default value at this release (on this GPU): the newest release up to `version` that sets it,
        else the engine-wide default. A default holds until a release changes it. Within a release a GPU-id
        rule wins over a memory-size rule, which wins over the release's plain default."""
        return self.default_with_release(key, version, gpu)[0]

    def default_with_release(self, key: str, version: str | None = None,
                             gpu: GpuFacts | None = None) -> tuple[float | None, Release | None]:
        """`default` and the release that sets it (None: the engine-wide default, or no default at all)."""
        if version is not None:
            for rel in reversed(self.releases):
                if not at_most(rel.version, version):
                    continue
                value = rel.default_on(key, gpu)
                if value is not None:
                    return value, rel
        return self.defaults.get(key), None

    def min_cc_at(self, version: str) -> str:
        """The compute-capability floor at this release: the newest release up to `version` that raised it
        (a line that dropped an architecture keeps it dropped), else the engine's."""
        for rel in reversed(self.releases):
            if rel.min_compute_capability and at_most(rel.version, version):
                return rel.min_compute_capability
        return self.min_compute_capability

    def flag(self, key: str, version: str | None = None) -> str | None:
        """The engine's own spelling of a flag at this release, or None when the release lacks it."""
        for spelling in self.flags.get(key, []):
            if version is None or spelling.covers(version):
                return spelling.name
        return None

    def spellings(self, key: str) -> list[str]:
        """Every way this engine's flag `key` is written: its spellings across releases, then its documented
        aliases (short options, environment variables), each once."""
        names = [s.name for s in self.flags.get(key, [])]
        extra = self.flag_aliases[key].names if key in self.flag_aliases else []
        return list(dict.fromkeys(names + extra))

    def other_spellings(self, key: str, spelt: str) -> list[str]:
        """The documented aliases of flag `key` other than the spelling `spelt` an answer uses."""
        return [n for n in (self.flag_aliases[key].names if key in self.flag_aliases else []) if n != spelt]

    def spelt_as(self, key: str, written: frozenset[str]) -> str | None:
        """The documented spelling of flag `key` that a pasted command line already uses (its long form
        `--n-gpu-layers` where the profile answers `-ngl`), so an answer reads in the user's own words;
        None when the text writes none of them."""
        return next((name for name in self.spellings(key) if name.startswith("-") and name in written), None)

    def keys_named(self, written: str) -> set[str]:
        """The flag keys a written flag, environment variable or keyword (`-ngl`, `LLAMA_ARG_CTX_SIZE`,
        `gpu_memory_utilization=`) names in this engine, compared without dashes or case."""
        norm = flag_key(written.split("=")[0].strip()).lower()
        return {key for key in self.flags if any(flag_key(n).lower() == norm for n in self.spellings(key))}

    def technique(self, technique: str, version: str | None = None) -> Technique | None:
        """The technique's switch in this release (None: the newest), or None when the release lacks it."""
        entries = self.techniques.get(technique, [])
        if version is None:
            return entries[-1] if entries else None
        return next((t for t in entries if t.covers(version)), None)

    def technique_on(self, technique: str, version: str) -> bool:
        """True when the technique is on by default in this release (no flag needed)."""
        entry = self.technique(technique, version)
        if entry is None:
            return False
        return entry.flag is None or (entry.default_on_since is not None and at_least(version, entry.default_on_since))


@dataclass(frozen=True)
class TechniqueFlag:
    """How one engine enables one technique, for the ontology's technique pages and the advisor."""

    engine: str
    flag: str
    since: str | None
    until: str | None
    source: str


def flag_key(name: str) -> str:
    """A flag as a JSON key: no leading dashes, '-' as '_' ("--enable-chunked-prefill" -> "enable_chunked_prefill")."""
    return name.lstrip("-").replace("-", "_")


def _known_techniques() -> set[str]:
    """Technique names of the ontology's one vocabulary (ontology/data/techniques.json)."""
    return set(techniques())


def load_profile(path: Path) -> EngineProfile:
    """Parse and validate one profile file; raises ProfileError naming the file and the field."""
    try:
        profile = EngineProfile.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ProfileError(f"{path.name}: {exc}") from exc
    unknown = sorted(set(profile.techniques) - _known_techniques())
    if unknown:
        raise ProfileError(f"{path.name}: techniques not in the ontology's techniques.json: {', '.join(unknown)}")
    return profile


@cache
def profiles() -> dict[str, EngineProfile]:
    """Every engine profile by id, in preference order."""
    loaded = [load_profile(p) for p in sorted(ENGINES_DIR.glob("*.json"))]
    ids = [p.id for p in loaded]
    if len(set(ids)) != len(ids):
        raise ProfileError(f"duplicate engine ids in {ENGINES_DIR}: {ids}")
    return {p.id: p for p in sorted(loaded, key=lambda p: (p.rank, p.id))}


@cache
def wrapper_deaths(engine: str | None = None) -> str:
    """One pattern for every wrapper's report that the engine it runs died (`Wrapper.died`), of `engine`'s wrappers
    only when given; a pattern that matches nothing when there is none. Recognising the engine, reading a crash and
    a wrapper's variables to rule out all read the wordings here, so each lives once, in the engine profiles."""
    engines = [profiles()[engine]] if engine in profiles() else [] if engine else list(profiles().values())
    deaths = [w.died.pattern for eng in engines for w in eng.wrappers if w.died is not None]
    return "|".join(f"(?:{d})" for d in deaths) or r"(?!)"


def engine_names() -> list[str]:
    """The one engine list (ids, in preference order): the form, the planner and the CLI read it."""
    return list(profiles())


def profile(engine: str) -> EngineProfile:
    return profiles()[engine]


def engine_label(engine: str) -> str:
    """The engine's name as people write it ("vLLM" for "vllm"); anything not an engine id comes back as is."""
    found = profiles().get(engine)
    return found.name if found else engine


@cache
def _aliases() -> dict[str, str]:
    out: dict[str, str] = {}
    for p in profiles().values():
        for alias in (p.id, p.name, *p.aliases):
            out[_alias_key(alias)] = p.id
    return out


def _alias_key(name: str) -> str:
    return name.strip().lower().replace(" ", "-").replace("_", "-")


def engine_id(name: str) -> str | None:
    """The engine id a user means ("TRT-LLM" -> "tensorrt-llm"), or None."""
    return _aliases().get(_alias_key(name))


def technique_flag(engine: str, version: str | None, technique: str) -> TechniqueFlag | None:
    """How `engine` at `version` (None: any release) enables `technique`, or None when that release
    has no such switch (an always-on technique has no flag to set)."""
    eid = engine_id(engine)
    if eid is None:
        return None
    entry = profiles()[eid].technique(technique, version)
    if entry is None or entry.flag is None:
        return None
    return _as_flag(eid, entry)


def _as_flag(eid: str, entry: Technique) -> TechniqueFlag:
    return TechniqueFlag(engine=eid, flag=entry.flag or "", since=entry.since, until=entry.until, source=entry.source)


def technique_flags(technique: str) -> list[TechniqueFlag]:
    """Every engine's switches for `technique` (one per spelling over its releases), in engine preference order."""
    return [_as_flag(eid, t) for eid, p in profiles().items() for t in p.techniques.get(technique, []) if t.flag]

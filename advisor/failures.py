"""Known failure signatures: the error strings serving engines print, and the knobs that fix them.

One typed, validated data file per engine (advisor/catalog/failures/*.json, plus common.json for
errors any engine can hit, such as a CUDA out-of-memory or an NCCL watchdog timeout). Each signature
is a set of regular expressions over the pasted text, the release range its string lives in, the
fixes (an engine flag named by its key in the engine profile, an environment variable, or an
upgrade) with their direction, and the public source of the string. Read by advisor.diagnose when a
person pastes an error. Flags are keys of advisor/catalog/engines/*.json, so their spelling at a
release comes from the engine profile (a flag renamed in some release is spelt as that release
spells it); a key the profile lacks is a load error, as is any unknown field.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from advisor import profiles
from advisor.profiles import Cc, Pattern, Quote, Url, Version
from advisor.versions import at_least, at_most

FAILURES_DIR = Path(__file__).resolve().parent / "catalog" / "failures"

Direction = Literal["raise", "lower", "set", "unset", "upgrade", "downgrade"]
# How a fix's number is worked out from what the pasted text states (advisor.remedies implements each).
Rule = Literal["at_most", "at_least", "below", "divisor", "dtype_for_gpu", "quantization_for_gpu",
               "memory_shortfall", "free_fraction", "kv_shortfall", "kv_dtype_for_gpu", "sum_at_least",
               "model_support", "softcap_release", "from_text", "gfx_override"]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{1,60}$")]
# A `docker run` option that bounds what the engine's container may use (/dev/shm, pinned memory): the limit is
# the container's, not the engine's, so no engine profile holds it.
ContainerOption = Annotated[str, StringConstraints(pattern=r"^--[a-z][a-z-]{1,30}$")]
# A CMake cache variable of the engine's own build (`cmake -B build -DGPU_TARGETS=gfx1100`): what the binary was
# compiled for, fixed when it was built, so no runtime flag or profile key holds it; the fix is a rebuild.
BuildOption = Annotated[str, StringConstraints(pattern=r"^-D[A-Z][A-Z0-9_]{1,60}$")]


class CatalogError(ValueError):
    """A failure catalog file that does not validate: names the file and the offending entry."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fix(_Data):
    """One change that resolves the failure: exactly one of `knob` (an engine profile flag key), `env`
    (an environment variable), `container` (a `docker run` option such as --shm-size), `build` (a CMake option
    of the engine's own build, set by rebuilding) or direction "upgrade" or "downgrade" (`to`, the release, when
    known; `package` when a library moves rather than the engine, or `package_from`, the regex group naming that
    library); `value` when the fix sets a literal;
    `rule` when the number comes from the text (`args` names the numbers, the regex group names, it reads). An
    environment variable to unset needs no value."""

    knob: str | None = None
    env: EnvName | None = None
    container: ContainerOption | None = None
    build: BuildOption | None = None
    direction: Direction
    value: str | None = None
    to: Version | None = Field(default=None, description="the first release with the fix, for an upgrade; the "
                                                         "last one without the failure, for a downgrade")
    package: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_.-]{1,40}$",
                                description="the package an upgrade or downgrade moves when it is not the engine "
                                            "(torch under an engine's compiled kernels)")
    package_from: str | None = Field(default=None, pattern=r"^[a-z_]{2,30}$",
                                     description="the pattern group naming the package that moves, when the message "
                                                 "names it (the library an ImportError names)")
    rule: Rule | None = None
    args: list[str] = Field(default_factory=list)
    why: str = Field(min_length=10, max_length=400)
    source: Url | None = None
    when: Literal["cuda_graph", "tensor_parallel", "startup", "serving"] | None = Field(
        default=None, description="listed first when the text shows this situation")

    @model_validator(mode="after")
    def _one_target(self) -> Fix:
        targets = ((self.knob is not None) + (self.env is not None) + (self.container is not None)
                   + (self.build is not None) + (self.direction in ("upgrade", "downgrade")))
        if targets != 1:
            raise ValueError("a fix names exactly one of `knob`, `env`, `container`, `build` or direction 'upgrade' "
                             "or 'downgrade'")
        if self.env is not None and self.value is None and self.direction != "unset":
            raise ValueError(f"environment variable {self.env} needs a value unless it is unset")
        if self.container is not None and self.direction == "unset":
            raise ValueError(f"container option {self.container} is raised or set, not unset")
        if self.build is not None and (self.direction != "set" or self.value is None):
            raise ValueError(f"build option {self.build} is set to a value")
        if (self.package is not None or self.package_from is not None) and self.direction not in ("upgrade", "downgrade"):
            raise ValueError(f"package {self.package or self.package_from} is upgraded or downgraded")
        if self.package is not None and self.package_from is not None:
            raise ValueError("a fix names its package or the pattern group that names it, not both")
        return self


class SeenIn(_Data):
    """A release and file where the engine's source holds the error string."""

    release: str = Field(min_length=1, max_length=40)
    file: str = Field(min_length=3, max_length=300)
    url: Url | None = None


class Signature(_Data):
    """One known failure: how to recognise it, in which releases, and what fixes it."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{2,80}$")
    title: str = Field(min_length=5, max_length=160)
    kind: Literal["memory", "compatibility", "limit", "distributed", "version"]
    patterns: list[Pattern] = Field(min_length=1)
    since: Version | None = None
    until: Version | None = None
    cc_below: Cc | None = Field(default=None, description="does not apply on GPUs at or above this compute capability")
    cc_required: bool = Field(default=False, description="applies only when the text shows the GPU (a pattern too "
                                                         "general to stand alone, such as a kernel library's name)")
    fallback: bool = Field(default=False, description="a traceback frame rather than an error (a crash inside the "
                                                      "memory profile run): applies only when no other signature does")
    fixes: dict[str, list[Fix]] = Field(min_length=1, description="per engine id, in the order to try them")
    explains: list[str] = Field(default_factory=list, description="ontology techniques that say why and what it costs")
    source: Url
    quote: Quote | None = None
    seen_in: list[SeenIn] = Field(default_factory=list)

    def covers(self, version: str | None) -> bool:
        return version is None or (at_least(version, self.since) and at_most(version, self.until))

    def match(self, text: str) -> re.Match[str] | None:
        """The first pattern's match in the text (case-insensitive), or None."""
        for pattern in self.compiled():
            found = pattern.search(text)
            if found:
                return found
        return None

    def compiled(self) -> list[re.Pattern[str]]:
        return _compile(tuple(self.patterns))


@cache
def _compile(patterns: tuple[str, ...]) -> list[re.Pattern[str]]:
    return [re.compile(p, re.IGNORECASE | re.DOTALL) for p in patterns]


class FailureFile(_Data):
    """One catalog file: `engine` is an engine id, or null for failures every engine can hit."""

    engine: str | None
    about: str = Field(min_length=10)
    signatures: list[Signature] = Field(min_length=1)


def _check_flags(path: Path, data: FailureFile) -> None:
    """Every knob must be a flag key of its engine's profile; every fix's engine a known engine."""
    known = profiles.profiles()
    for sig in data.signatures:
        for engine, fixes in sig.fixes.items():
            if engine not in known:
                raise CatalogError(f"{path.name}: {sig.id}: unknown engine {engine!r}")
            if data.engine is not None and engine != data.engine:
                raise CatalogError(f"{path.name}: {sig.id}: fixes for {engine} belong in {engine}.json")
            for fix in fixes:
                if fix.knob is not None and fix.knob not in known[engine].flags:
                    raise CatalogError(f"{path.name}: {sig.id}: {engine} profile has no flag key {fix.knob!r}")


def load_file(path: Path) -> FailureFile:
    """Parse and validate one catalog file; raises CatalogError naming the file and the field."""
    try:
        data = FailureFile.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise CatalogError(f"{path.name}: {exc}") from exc
    if data.engine is not None and data.engine not in profiles.profiles():
        raise CatalogError(f"{path.name}: unknown engine {data.engine!r}")
    _check_flags(path, data)
    return data


@cache
def catalog() -> tuple[FailureFile, ...]:
    """Every failure file, engine files first (their strings are more specific than the common ones)."""
    files = [load_file(p) for p in sorted(FAILURES_DIR.glob("*.json"))]
    ids = [s.id for f in files for s in f.signatures]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise CatalogError(f"duplicate signature ids in {FAILURES_DIR}: {duplicates}")
    return tuple(sorted(files, key=lambda f: f.engine is None))


def signatures() -> list[tuple[str | None, Signature]]:
    """(engine the file is about, signature) for every signature, engine-specific first."""
    return [(f.engine, s) for f in catalog() for s in f.signatures]


def size_per_engine() -> dict[str, int]:
    """How many signatures each catalog file holds ("common" for the engine-independent file)."""
    return {f.engine or "common": len(f.signatures) for f in catalog()}

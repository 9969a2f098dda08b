"""How each engine release accounts for GPU memory before it sizes the KV cache (advisor/catalog/memory_accounting.json).

Read by the sizing (advisor.sizing.plan_memory) for every configuration the advisor considers. Engines size the
KV cache differently and change how between releases: vLLM runs a profiling forward pass of
max_num_batched_tokens tokens and a dummy sampler pass over max_num_seqs rows, then gives the KV cache what is
left of `total x gpu_memory_utilization`; SGLang runs no profiling pass and keeps `(the free memory before the
weights) x (1 - mem_fraction_static)` back; TGI warms up with a prefill and then keeps a wiggle room. Each release line here
states those terms as data, each with its basis: the public file at a release tag or commit (quoted), a published
measurement (quoted), a fit made here on the dev split, or the advisor's own assumption; a citation that was not
checked, or that no source shows, says so (`verified` false) and why. Validated on load: a bad file stops the
start with the entry that is wrong.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from advisor.catalog import load_json
from advisor.versions import at_most, vkey


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_PINNED = re.compile(r"/(blob|tree)/(v\d[\w.\-]*|[0-9a-f]{40})/")  # a release tag or a commit, never a branch


class Citation(_Data):
    """Where one term comes from, and whether that was checked.

    `basis`: `code` (the file at a release tag or commit; `quote` holds its lines), `measurement` (published
    numbers, quoted), `fit` (derived here from the dev split's measurements; `says` names how) or `assumption` (the
    advisor's own choice, which no source shows, so never verified)."""

    term: str
    basis: Literal["code", "measurement", "fit", "assumption"]
    url: str = Field(pattern=r"^https://")
    says: str = Field(min_length=10, max_length=300, description="what the source shows, in our words")
    quote: str = Field(default="", max_length=300, description="the source's own lines, whitespace collapsed, '...' for skipped lines")
    verified: bool
    unverified_because: str = Field(default="", max_length=300)

    @model_validator(mode="after")
    def _honest(self) -> Citation:
        if self.verified == bool(self.unverified_because):
            raise ValueError(f"{self.term}: an unverified citation says why; a verified one gives no such reason")
        if self.basis == "assumption" and self.verified:
            raise ValueError(f"{self.term}: an assumption is the advisor's own choice and is never verified")
        if self.verified and self.basis in ("code", "measurement") and not self.quote:
            raise ValueError(f"{self.term}: a verified {self.basis} citation quotes its source")
        if self.basis in ("code", "measurement", "fit") and not _PINNED.search(self.url):
            raise ValueError(f"{self.term}: cite the file at a release tag or commit, not a branch: {self.url}")
        return self


class Line(_Data):
    """The memory accounting of one engine from release `since` until the next line."""

    since: str = Field(pattern=r"^\d+(\.\d+){1,3}$")
    label: str
    profile_pass: bool = Field(description="a forward pass is profiled and its peak kept back from the KV cache")
    activation_scale: float = Field(ge=0, le=4, description="x the hidden/MLP activation model of advisor.sizing")
    sampler_bytes_per_logit: float = Field(ge=0, le=128, description="peak bytes per (profiled sequence x vocab) entry")
    logits_sharded: bool = Field(description="the logits are split across tensor-parallel ranks during profiling")
    non_torch_gib: float = Field(ge=0, le=8, description="CUDA context, cuBLAS workspaces: one GPU")
    multi_gpu_extra_gib: float = Field(ge=0, le=8, description="added per GPU when tensor parallelism > 1 (NCCL, custom all-reduce)")
    constant_gib: float = Field(ge=-4, le=8, description="fitted remainder; 0 when nothing was fitted")
    fraction_scale: float = Field(gt=0, le=1, description="the engine multiplies the user's memory fraction by this")
    kv_share_of_rest: float = Field(gt=0, le=1, description="share of the memory left after everything else given to the KV cache")
    fraction_after_overhead: bool = Field(default=False, description=(
        "the engine reads the memory its fraction applies to after the CUDA context and the distributed init have "
        "taken theirs (non_torch_gib, multi_gpu_extra_gib), so the fraction is of what they leave"))
    window_kv: bool = Field(default=False, description="sliding-window layers hold only their window of each sequence's KV cache")
    allreduce_held_share: float = Field(default=0.0, ge=0, le=1, description=(
        "with tensor parallelism, the share of the profiled pass's all-reduce inputs still reserved behind NCCL's "
        "stream (record_stream) when the engine reads device-wide usage; 0 where they do not count"))
    fitted_on: Literal["", "dev"] = ""
    sources: list[Citation] = Field(min_length=1)

    @model_validator(mode="after")
    def _fitted_terms_say_so(self) -> Line:
        if self.constant_gib and self.fitted_on != "dev":
            raise ValueError(f"line {self.label}: a constant is only ever fitted, and only on the dev split")
        if (self.fitted_on == "dev") != any(c.basis == "fit" for c in self.sources):
            raise ValueError(f"line {self.label}: fitted_on 'dev' and a citation of basis 'fit' go together")
        return self


class Accounting(_Data):
    """All lines, per engine id, oldest first; `default` stands in for an engine without lines."""

    about: str = Field(alias="_about", min_length=20)
    default: Line
    engines: dict[str, list[Line]]

    @model_validator(mode="after")
    def _ordered(self) -> Accounting:
        for engine, lines in self.engines.items():
            keys = [vkey(line.since) for line in lines]
            if not lines or keys != sorted(keys) or len(set(keys)) != len(keys):
                raise ValueError(f"{engine}: lines must be given oldest first, one per release")
        return self


@cache
def accounting() -> Accounting:
    """The validated file, read once per process."""
    return Accounting.model_validate(load_json("memory_accounting.json"))


def line(engine: str | None, version: str | None) -> Line:
    """The accounting in force at `version` of `engine` (its first line for an older or unknown release)."""
    lines = accounting().engines.get(engine or "")
    if not lines:
        return accounting().default
    if version is None:
        return lines[-1]
    chosen = lines[0]
    for candidate in lines:
        if at_most(candidate.since, version):
            chosen = candidate
    return chosen

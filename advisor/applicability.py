""""Does this paper apply to me?": a paper's reported environment compared with a person's saved setup.

Runs when a paper page is shown to someone who saved a setup (frontend.views.papers). Pure reads: the
paper's environment fingerprint (papers.pdf.environment: GPUs, CUDA, engines), the model sizes its
facts state, and the techniques its facts discuss by name; the setup as the advisor's catalogs
understand it (GPU architecture and memory, model size). Each aspect says same / similar / different
/ unknown with both sides; "how to try it" gives the engine flag of the person's engine release where
it ships the technique (with the release that added it), else the paper's repository and its health.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from advisor import profiles
from advisor.catalog import resolve_gpu
from advisor.model_specs import resolve_model
from advisor.versions import at_least

SETUP_FIELDS = ("gpu", "gpu_count", "cuda", "engine", "engine_version", "model", "prompt_tokens", "output_tokens",
                "concurrency")
# A paper's model-size results carry over to a model within this factor of the sizes it measured.
SIMILAR_SIZE_FACTOR = 2.0


@dataclass(frozen=True)
class Aspect:
    name: str
    paper: str
    yours: str
    verdict: str  # "same", "similar", "different" or "unknown"
    note: str = ""


def _count(setup: dict[str, Any], reported: list[dict[str, Any]]) -> Aspect:
    counts = sorted({g["count"] for g in reported if g.get("count")})
    yours = int(setup.get("gpu_count") or 1)
    return Aspect("GPU count", ", ".join(map(str, counts)) or "not reported", str(yours),
                   "unknown" if not counts else "same" if yours in counts else
                   "similar" if min(counts) <= yours <= max(counts) else "different",
                   "" if not counts or yours >= min(counts) else "fewer GPUs than any setup the paper measured")


def _gpu_aspects(setup: dict[str, Any], env: dict[str, Any]) -> list[Aspect]:
    mine = resolve_gpu(str(setup.get("gpu") or ""))
    reported = env.get("gpus") or []
    names = sorted({g["model"] for g in reported})
    if not names or mine is None:
        return [Aspect("GPU", ", ".join(names) or "not reported", mine.name if mine else str(setup.get("gpu") or "—"),
                       "unknown")]
    theirs = [g for g in (resolve_gpu(n) for n in names) if g is not None]
    if any(re.search(rf"(?<![A-Za-z0-9]){re.escape(n)}(?![0-9])", f"{mine.id} {mine.name}", re.IGNORECASE)
           for n in names):
        gpu = Aspect("GPU", ", ".join(names), mine.name, "same")
    elif any(g.arch == mine.arch for g in theirs):
        gpu = Aspect("GPU", ", ".join(names), mine.name, "similar", f"same architecture ({mine.arch})")
    else:
        gpu = Aspect("GPU", ", ".join(names), mine.name, "different",
                     "another GPU architecture: kernels and the compute/bandwidth balance differ")
    memories = [g["memory_gb"] for g in reported if g.get("memory_gb")] or [g.memory_gib for g in theirs]
    if not memories:
        return [gpu, Aspect("GPU memory", "not reported", f"{mine.memory_gib:g} GB", "unknown"), _count(setup, reported)]
    span = f"{min(memories):g} GB" if min(memories) == max(memories) else f"{min(memories):g}–{max(memories):g} GB"
    if mine.memory_gib >= min(memories) * 0.95:
        memory = Aspect("GPU memory", span, f"{mine.memory_gib:g} GB",
                        "same" if mine.memory_gib >= max(memories) * 0.95 else "similar")
    else:
        memory = Aspect("GPU memory", span, f"{mine.memory_gib:g} GB", "different",
                        "less memory than the paper had: its batch sizes and context lengths may not fit")
    return [gpu, memory, _count(setup, reported)]


def _cuda_aspect(setup: dict[str, Any], env: dict[str, Any]) -> Aspect:
    theirs, mine = env.get("cuda") or [], str(setup.get("cuda") or "")
    if not theirs or not mine:
        return Aspect("CUDA", ", ".join(theirs) or "not reported", mine or "—", "unknown")
    if mine in theirs:
        return Aspect("CUDA", ", ".join(theirs), mine, "same")
    if any(at_least(mine, t) for t in theirs):
        return Aspect("CUDA", ", ".join(theirs), mine, "similar", "your driver supports a newer CUDA than the paper's")
    return Aspect("CUDA", ", ".join(theirs), mine, "different",
                  "your driver's CUDA is older than the paper's: its code may need a newer driver")


def _engine_aspect(setup: dict[str, Any], env: dict[str, Any]) -> Aspect:
    engines = env.get("engines") or []
    listed = ", ".join(f"{e['name']} {e['version']}" if e.get("version") else e["name"] for e in engines)
    engine, version = str(setup.get("engine") or ""), str(setup.get("engine_version") or "")
    yours = f"{engine} {version}".strip() or "—"
    if not engines or not engine:
        return Aspect("Engine", listed or "not reported", yours, "unknown")
    mine = profiles.engine_id(engine)
    same = [e for e in engines if profiles.engine_id(e["name"]) == mine]
    if not same:
        return Aspect("Engine", listed, yours, "different", "the paper compares or builds on other engines")
    if any(e.get("version") == version for e in same):
        return Aspect("Engine", listed, yours, "same")
    return Aspect("Engine", listed, yours, "similar", "same engine; its behaviour may differ between releases")


def _model_aspect(setup: dict[str, Any], sizes_b: list[float]) -> Aspect:
    spec = resolve_model(str(setup.get("model") or ""))[0] if setup.get("model") else None
    theirs = ", ".join(f"{s:g}B" for s in sorted(set(sizes_b))) or "not reported"
    if spec is None or not sizes_b:
        return Aspect("Model size", theirs, f"{spec.params_total / 1e9:.1f}B" if spec else "—", "unknown")
    mine = spec.params_total / 1e9
    nearest = min(sizes_b, key=lambda s: abs(s - mine))
    ratio = max(nearest, mine) / min(nearest, mine)
    verdict = "same" if ratio <= 1.15 else "similar" if ratio <= SIMILAR_SIZE_FACTOR else "different"
    return Aspect("Model size", theirs, f"{mine:.1f}B", verdict,
                  "" if verdict != "different" else f"the nearest size the paper measured is {nearest:g}B")


def _how_to_try(setup: dict[str, Any], techniques: list[str], repos: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per technique the paper discusses: the flag in your engine release, the release that adds it, or the repo."""
    engine, version = str(setup.get("engine") or ""), setup.get("engine_version") or None
    out: list[dict[str, Any]] = []
    eid = profiles.engine_id(engine) if engine else None
    for name in techniques:
        entry = profiles.profile(eid).technique(name, version) if eid else None
        if entry is not None and entry.flag is None:
            out.append({"technique": name, "how": "built_in", "engine": eid, "since": entry.since,
                        "source": entry.source})
            continue
        flag = profiles.technique_flag(engine, version, name) if engine else None
        if flag:
            out.append({"technique": name, "how": "flag", "engine": flag.engine, "flag": flag.flag,
                        "since": flag.since, "source": flag.source})
            continue
        later = [f for f in profiles.technique_flags(name) if not engine or f.engine == eid]
        if later:
            f = later[0]
            out.append({"technique": name, "how": "upgrade", "engine": f.engine, "flag": f.flag, "since": f.since,
                        "source": f.source})
        elif repos:
            out.append({"technique": name, "how": "repository", "repos": repos})
    if not out and repos:
        out.append({"technique": None, "how": "repository", "repos": repos})
    return out


def applicability(setup: dict[str, Any], environment: dict[str, Any], model_sizes_b: list[float],
                  techniques: list[str], repos: list[dict[str, Any]]) -> dict[str, Any]:
    """`{"aspects": [Aspect...], "summary": str, "try": [...]}` for one paper against one saved setup."""
    aspects = [*_gpu_aspects(setup, environment or {}), _cuda_aspect(setup, environment or {}),
               _engine_aspect(setup, environment or {}), _model_aspect(setup, model_sizes_b)]
    different = [a.name for a in aspects if a.verdict == "different"]
    known = [a for a in aspects if a.verdict != "unknown"]
    if not known:
        summary = "The paper does not report enough of its setup to compare with yours."
    elif different:
        summary = f"Your setup differs in {', '.join(different)}: expect the paper's numbers to move."
    else:
        summary = "The paper measured a setup like yours: its results should carry over."
    return {"aspects": aspects, "summary": summary, "try": _how_to_try(setup, techniques, repos)}

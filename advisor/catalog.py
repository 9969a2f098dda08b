"""Loads the GPU and engine catalogs (advisor/catalog/*.json) and resolves what users type.

Runs on every recommendation (cached after the first call). GPU names arrive as people write them
("A100-SXM4-40GB", "NVIDIA A100-40G", "Tesla V100-SXM2-32GB"), so resolution normalises tokens and
scores candidates instead of demanding an exact id; an unknown name yields the closest known names.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from advisor.versions import vkey
from ontology.selectors import gpu_vocabulary

CATALOG_DIR = Path(__file__).resolve().parent / "catalog"
# Words that say nothing about which GPU is meant: the brand words of the GPU vocabulary, and these.
_NOISE = {b.lower() for b in gpu_vocabulary().brands} | {"gpu", "generation", "hbm3", "hbm2", "hbm2e", "the", "card"}


@cache
def load_json(name: str) -> dict[str, Any]:
    """One catalog file, parsed once per process."""
    with open(CATALOG_DIR / name, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


@dataclass(frozen=True)
class Gpu:
    """One GPU model with the numbers the sizing and performance model need."""

    id: str
    name: str
    arch: str
    compute_capability: str
    memory_gib: float
    usable_gib: float
    bandwidth_gbs: float
    tflops: dict[str, float]
    interconnect_kind: str
    interconnect_gbs: float
    sources: tuple[str, ...]
    estimated: tuple[str, ...] = field(default=())
    min_cuda: str | None = None  # the first CUDA release with kernels for this architecture
    min_cuda_source: str | None = None
    dropped_in_cuda: str | None = None  # the first CUDA release without kernels for this architecture
    dropped_in_cuda_source: str | None = None

    @property
    def cc(self) -> tuple[int, ...]:
        return vkey(self.compute_capability)

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for a compute precision, falling back to fp16 (same tensor-core path)."""
        return self.tflops.get(precision) or self.tflops.get("fp16") or self.tflops.get("bf16") or 0.0


def _usable(entry: dict[str, Any], reserve: float) -> float:
    if entry.get("reported_gib"):
        return float(entry["reported_gib"])
    capacity = float(entry["memory_gib"]) * (15 / 16 if entry.get("ecc_gddr") else 1.0)
    return round(capacity - reserve, 2)


@cache
def gpus() -> dict[str, Gpu]:
    """All catalog GPUs by id; numbers a vendor does not publish come from `estimate_from`."""
    data = load_json("gpus.json")
    reserve = float(data["_usable_memory"]["driver_reserve_gib"])
    raw = {g["id"]: g for g in data["gpus"]}
    out: dict[str, Gpu] = {}
    for gid, g in raw.items():
        tflops = dict(g.get("tflops") or {})
        estimated: tuple[str, ...] = ()
        if not tflops and g.get("estimate_from"):
            tflops = dict(raw[g["estimate_from"]]["tflops"])
            estimated = tuple(f"{k} TFLOPS (from {g['estimate_from']})" for k in tflops)
        link = g.get("interconnect") or {}
        out[gid] = Gpu(
            id=gid, name=g["name"], arch=g["arch"], compute_capability=g["compute_capability"],
            memory_gib=float(g["memory_gib"]), usable_gib=_usable(g, reserve),
            bandwidth_gbs=float(g["bandwidth_gbs"]), tflops=tflops,
            interconnect_kind=link.get("kind", "pcie"), interconnect_gbs=float(link.get("gbs", 32)),
            sources=tuple(g.get("sources", ())), estimated=estimated,
            min_cuda=(g.get("min_cuda") or {}).get("version"), min_cuda_source=(g.get("min_cuda") or {}).get("source"),
            dropped_in_cuda=(g.get("dropped_in_cuda") or {}).get("version"),
            dropped_in_cuda_source=(g.get("dropped_in_cuda") or {}).get("source"),
        )
    return out


_RTX = re.compile(r"\brtx(\d)")
# A memory size: "40G", "40 GB", "40GiB" -> "40gb". The look-behind anchors the match at the start of a
# digit run, so a long run of digits is scanned once instead of once per starting digit (which was
# quadratic: 20,000 digits took 17 s).
_MEMORY = re.compile(r"(?<!\d)(\d+)[ \t]*g(?:i?b)?\b")
_SPLIT = re.compile(r"[^a-z0-9.]+")


def _tokens(text: str) -> list[str]:
    text = text.lower().replace("_", " ")
    text = _RTX.sub(r"rtx \1", text)
    text = _MEMORY.sub(r"\1gb", text)
    parts = _SPLIT.split(text)
    return [p for p in parts if p and p not in _NOISE]


def _key(text: str) -> str:
    return " ".join(_tokens(text))


@cache
def _gpu_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for g in load_json("gpus.json")["gpus"]:
        for label in [g["id"], g["name"], *g.get("aliases", [])]:
            index.setdefault(_key(label), g["id"])
    return index


@cache
def _vocab(gpu_id: str) -> frozenset[str]:
    g = next(x for x in load_json("gpus.json")["gpus"] if x["id"] == gpu_id)
    labels = [g["id"], g["name"], *g.get("aliases", []), f"{g['memory_gib']:g}GB"]
    return frozenset(t for label in labels for t in _tokens(label))


@cache
def _all_vocab() -> frozenset[str]:
    return frozenset(t for gid in gpus() for t in _vocab(gid))


def _score(query: list[str], gpu_id: str) -> float:
    """How well typed tokens match one GPU. A model number, memory size or any word that names
    another catalog GPU (PCIe, SXM, Quadro, Ada...) must match, or the GPU is out; unknown words cost a little."""
    vocab, known = _vocab(gpu_id), _all_vocab()
    score = 0.0
    for token in query:
        if token in vocab:
            score += 1
        elif any(c.isdigit() for c in token) or token in known:
            return 0.0
        else:
            score -= 0.5
    return score


def resolve_gpu(name: str) -> Gpu | None:
    """The catalog GPU a user means, or None when nothing plausible matches."""
    key = _key(name)
    index = _gpu_index()
    if key in index:
        return gpus()[index[key]]
    query = _tokens(name)
    if not query:
        return None
    scored = sorted(((_score(query, gid), gid) for gid in gpus()), reverse=True)
    best, gid = scored[0]
    if best <= 0:
        return None
    if len(scored) > 1 and scored[1][0] == best and not _memory_token(query):
        # ambiguous without a memory size: prefer the alias table's default for the model token
        for token in query:
            if token in index and _score(query, index[token]) == best:
                return gpus()[index[token]]
    return gpus()[gid]


def _memory_token(tokens: list[str]) -> bool:
    return any(t.endswith("gb") for t in tokens)


def closest_gpu_names(name: str, limit: int = 5) -> list[str]:
    """Known GPU names that look most like what the user typed (for the error hint)."""
    names = {g.name: _key(g.name) for g in gpus().values()}
    ranked = difflib.get_close_matches(_key(name), list(names.values()), n=limit, cutoff=0.0)
    by_key = {v: k for k, v in names.items()}
    return [by_key[k] for k in ranked]

"""Model shapes: catalog lookup by Hugging Face id, pre-quantized variants, and unknown ids.

Runs on every recommendation. Parameter counts are computed from the config shape (attention,
MLP or experts, embeddings) so that sizing follows the checkpoint rather than a rounded marketing
number; cards that state counts (MLA models) override. An unknown id is sized from the parameter
count in its name, borrowing the layout of the nearest catalog model, and the answer says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from advisor.catalog import load_json

QUANT_MARKERS = {
    "awq": ("awq", 4), "gptq": ("gptq", 4), "fp8": ("fp8", 8), "gguf": ("gguf", 4),
    "bnb": ("bitsandbytes", 4), "int4": ("gptq", 4), "w4a16": ("gptq", 4), "int8": ("int8", 8),
}
_IGNORED = {"hf", "instruct", "chat", "it", "meta", "base", "v0", "4bit", "8bit", "w4a16", "int4", "int8"}


@dataclass(frozen=True)
class ModelSpec:
    """Everything sizing and performance need about one checkpoint."""

    id: str
    architecture: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_context: int
    dtype: str
    params_total: float
    params_active: float
    embedding_params: float
    source: str
    experts: int = 0
    experts_per_token: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    quantization: str | None = None
    weight_bits: float = 16
    tied_embeddings: bool = False
    special: tuple[str, ...] = field(default=())
    base_id: str | None = None
    catalog_id: str | None = None
    estimated: bool = False

    @property
    def is_moe(self) -> bool:
        return self.experts > 0 or self.params_active < self.params_total * 0.9

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def linear_params(self) -> float:
        """Parameters in the transformer blocks (what weight quantization compresses)."""
        return self.params_total - self.embedding_params


def _count(entry: dict[str, Any]) -> tuple[float, float, float]:
    """(total, active, embedding) parameters from the config shape."""
    h, hd = entry["hidden"], entry["head_dim"]
    attn = h * entry["heads"] * hd * 2 + h * entry["kv_heads"] * hd * 2
    inter = entry.get("intermediate", 0)
    experts = entry.get("experts", 0)
    shared = 3 * h * entry.get("shared_expert_intermediate", 0)
    if experts:
        mlp_total = experts * 3 * h * inter + h * experts + shared
        mlp_active = entry["experts_per_token"] * 3 * h * inter + h * experts + shared
    else:
        mlp_total = mlp_active = 3 * h * inter
    embed = entry["vocab"] * h * (1 if entry.get("tied_embeddings") else 2)
    layers = entry["layers"]
    return layers * (attn + mlp_total) + embed, layers * (attn + mlp_active) + embed, embed


def _spec(entry: dict[str, Any], **overrides: Any) -> ModelSpec:
    total, active, embed = _count(entry) if "intermediate" in entry else (0.0, 0.0, 0.0)
    stated = entry.get("params_b")
    if stated:
        total, active = stated["total"] * 1e9, stated["active"] * 1e9
        embed = entry["vocab"] * entry["hidden"] * (1 if entry.get("tied_embeddings") else 2)
    spec = ModelSpec(
        id=entry["id"], architecture=entry["architecture"], layers=entry["layers"], hidden=entry["hidden"],
        heads=entry["heads"], kv_heads=entry["kv_heads"], head_dim=entry["head_dim"],
        intermediate=entry.get("intermediate", 0), vocab=entry["vocab"], max_context=entry["max_context"],
        dtype=entry["dtype"], params_total=float(total), params_active=float(active), embedding_params=float(embed),
        source=entry["source"], experts=entry.get("experts", 0), experts_per_token=entry.get("experts_per_token", 0),
        kv_lora_rank=entry.get("kv_lora_rank", 0), qk_rope_head_dim=entry.get("qk_rope_head_dim", 0),
        quantization=entry.get("quantization"), weight_bits=float(entry.get("weight_bits", 16)),
        tied_embeddings=bool(entry.get("tied_embeddings")), special=tuple(entry.get("special", ())),
        catalog_id=entry["id"],
    )
    return replace(spec, **overrides) if overrides else spec


@cache
def _entries() -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in load_json("models.json")["models"]}


@cache
def _aliases() -> dict[str, str]:
    out: dict[str, str] = {}
    for m in load_json("models.json")["models"]:
        for label in [m["id"], *m.get("aliases", [])]:
            out[label.lower()] = m["id"]
    return out


def _name_tokens(model_id: str) -> frozenset[str]:
    name = model_id.split("/")[-1].lower()
    parts = [p for p in re.split(r"[-_.\s]+", name) if p]
    return frozenset(p for p in parts if p not in _IGNORED and p not in QUANT_MARKERS)


def quantized_checkpoints(catalog_id: str | None) -> list[dict[str, Any]]:
    """Published pre-quantized checkpoints of a catalog model (id, quantization, weight_bits, source)."""
    if not catalog_id:
        return []
    return [e for e in _entries().values() if e.get("base") == catalog_id]


def _quant_marker(model_id: str) -> tuple[str, float] | None:
    parts = set(re.split(r"[-_.\s/]+", model_id.lower()))
    for marker, quant in QUANT_MARKERS.items():
        if marker in parts:
            return quant
    return None


def _base_by_name(model_id: str) -> str | None:
    """Catalog model whose name tokens equal the id's (org, quant and chat suffixes ignored)."""
    wanted = _name_tokens(model_id)
    for mid, entry in _entries().items():
        if "base" in entry:
            continue
        for label in [mid, *entry.get("aliases", [])]:
            if _name_tokens(label) == wanted:
                return mid
    return None


def _from_entry(mid: str, requested: str) -> ModelSpec:
    entry = _entries()[mid]
    if "base" in entry:
        base = _entries()[entry["base"]]
        return _spec(base, id=requested, quantization=entry["quantization"], weight_bits=float(entry["weight_bits"]),
                     source=entry["source"], base_id=base["id"], intermediate=entry.get("intermediate", base["intermediate"]))
    return _spec(entry, id=requested)


def _size_from_name(model_id: str) -> tuple[float, float] | None:
    name = model_id.split("/")[-1]
    moe = re.search(r"(\d+)x(\d+(?:\.\d+)?)[bB]", name)
    if moe:
        total = int(moe.group(1)) * float(moe.group(2)) * 1e9
        return total, total
    size = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)([bBmM])(?![a-zA-Z])", name)
    if not size:
        return None
    total = float(size.group(1)) * (1e9 if size.group(2) in "bB" else 1e6)
    active = re.search(r"[aA](\d+(?:\.\d+)?)[bB]", name)
    return total, (float(active.group(1)) * 1e9 if active else total)


def _nearest_dense(total: float) -> dict[str, Any]:
    dense = [e for e in _entries().values() if "base" not in e and "intermediate" in e and not e.get("experts")]
    return min(dense, key=lambda e: abs(_count(e)[0] - total))


def resolve_model(model_id: str) -> tuple[ModelSpec | None, list[str]]:
    """The spec for a Hugging Face id plus warnings; (None, []) when not even a size can be read."""
    key = model_id.strip().lower()
    if key in _aliases():
        return _from_entry(_aliases()[key], model_id.strip()), []
    quant = _quant_marker(model_id)
    base = _base_by_name(model_id)
    if base:
        spec = _from_entry(base, model_id.strip())
        warnings = [f"'{model_id}' is not in the catalog; using the shape of {base} ({spec.source})."]
        if quant:
            spec = replace(spec, quantization=quant[0], weight_bits=float(quant[1]), base_id=base)
            warnings.append(f"the name marks a pre-quantized checkpoint ({quant[0]}, ~{quant[1]:g}-bit weights)")
        return spec, warnings
    sized = _size_from_name(model_id)
    if not sized:
        return None, []
    total, active = sized
    proxy = _nearest_dense(total)
    p_total, _, p_embed = _count(proxy)
    spec = _spec(proxy, id=model_id.strip(), params_total=total, params_active=active,
                 embedding_params=p_embed * min(1.0, total / p_total), estimated=True, source=proxy["source"],
                 catalog_id=None, architecture="unknown", special=())  # the proxy's model-specific rules do not apply
    if quant:
        spec = replace(spec, quantization=quant[0], weight_bits=float(quant[1]))
    warnings = [f"'{model_id}' is not in the catalog: sized from the {total / 1e9:g}B parameters in its name, "
                f"with the layer layout of {proxy['id']}; check the real config.json before relying on the numbers."]
    return spec, warnings

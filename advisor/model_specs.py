"""Model shapes: catalog lookup by Hugging Face id, pre-quantized variants, and specs from Hub configs.

Runs on every recommendation. Parameter counts are computed from the config shape (attention,
MLP or experts, embeddings) so that sizing follows the checkpoint rather than a rounded marketing
number; cards that state counts (MLA models) and safetensors metadata from the Hub override. A model
is never sized from the parameter count in its name: an id the catalog lacks is read from the Hub
(`advisor.hub`), and a renamed checkpoint of a catalog model borrows that model's shape with a warning.
"""
from __future__ import annotations

import difflib
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
    unquantized_params: float = 0.0  # block parameters a quantized checkpoint keeps in 16 bit (modules_to_not_convert)
    sliding_window: int = 0
    sliding_layers: int = 0
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
        tied_embeddings=bool(entry.get("tied_embeddings")), unquantized_params=float(entry.get("unquantized_params", 0.0)),
        sliding_window=int(entry.get("sliding_window", 0)), sliding_layers=int(entry.get("sliding_layers", 0)),
        special=tuple(entry.get("special", ())),
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


def catalog_model(model_id: str) -> ModelSpec | None:
    """The catalog's spec for exactly this id (or one of its aliases)."""
    key = model_id.strip().lower()
    return _from_entry(_aliases()[key], model_id.strip()) if key in _aliases() else None


def derived_model(model_id: str) -> tuple[ModelSpec | None, list[str]]:
    """A renamed or re-quantized checkpoint of a catalog model, by its name tokens, with the warning
    that says whose shape it borrows; (None, []) when no catalog model matches."""
    quant = _quant_marker(model_id)
    base = _base_by_name(model_id)
    if not base:
        return None, []
    spec = _from_entry(base, model_id.strip())
    warnings = [f"'{model_id}' is not in the catalog; using the shape of {base} ({spec.source})."]
    if quant:
        spec = replace(spec, quantization=quant[0], weight_bits=float(quant[1]), base_id=base)
        warnings.append(f"the name marks a pre-quantized checkpoint ({quant[0]}, ~{quant[1]:g}-bit weights)")
    return spec, warnings


def resolve_model(model_id: str) -> tuple[ModelSpec | None, list[str]]:
    """The catalog's spec for a Hugging Face id (exact, else a derived checkpoint) plus warnings."""
    exact = catalog_model(model_id)
    return (exact, []) if exact is not None else derived_model(model_id)


def closest_model_ids(model_id: str, limit: int = 5) -> list[str]:
    """Catalog ids that look most like what the user typed (for the error hint)."""
    ids = [e["id"] for e in _entries().values() if "base" not in e]
    by_lower = {i.lower(): i for i in ids}
    return [by_lower[m] for m in difflib.get_close_matches(model_id.strip().lower()[:200], list(by_lower), n=limit, cutoff=0.0)]


def _first(config: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return default


def _sliding_layers(text: dict[str, Any]) -> dict[str, int]:
    """Layers a config marks `sliding_attention` in `layer_types` (gpt-oss alternates them with full attention)
    and their window; {} for a model without per-layer types, whose every layer attends to the whole sequence."""
    types = text.get("layer_types")
    window = text.get("sliding_window")
    if not isinstance(types, list) or not isinstance(window, int) or window <= 0:
        return {}
    sliding = sum(1 for t in types if t == "sliding_attention")
    return {"sliding_window": window, "sliding_layers": sliding} if sliding else {}


def _unconverted_params(entry: dict[str, Any], patterns: Any) -> float:
    """Block parameters a quantized checkpoint leaves in 16 bit, from its `modules_to_not_convert` patterns:
    the attention projections (a pattern naming `attn`) and the MoE router (`router`, or a module named `gate`).
    Embeddings and the LM head are always counted in 16 bit (advisor.sizing), so their patterns add nothing."""
    if not isinstance(patterns, list):
        return 0.0
    names = [str(p).lower() for p in patterns]
    h, hd = entry["hidden"], entry["head_dim"]
    per_layer = 0
    if any("attn" in n for n in names):
        per_layer += h * entry["heads"] * hd * 2 + h * entry["kv_heads"] * hd * 2
    if entry.get("experts") and any("router" in n or n.split(".")[-1] == "gate" for n in names):
        per_layer += h * entry["experts"]
    return float(entry["layers"] * per_layer)


HUB_DTYPES = {"bfloat16": "bfloat16", "float16": "float16", "float32": "float32"}
FLOAT_STORAGE = {"BF16", "F16", "F32"}


def spec_from_config(repo_id: str, config: dict[str, Any], parameters: dict[str, int], source: str,
                     origin: str = "the Hugging Face Hub") -> tuple[ModelSpec, list[str]]:
    """A ModelSpec from a config.json and safetensors parameter counts: the Hub's (see advisor.hub), or one
    `origin` names (a local folder, the request, a bundled copy; see advisor.local_models).

    The parameter count is the safetensors total when the weights are stored as floats; for packed
    quantized weights (or no metadata) it is computed from the config's shape, and the answer says so."""
    nested = config.get("text_config")
    text: dict[str, Any] = nested if isinstance(nested, dict) else config
    hidden = int(_first(text, "hidden_size", "n_embd", "d_model"))
    heads = int(_first(text, "num_attention_heads", "n_head"))
    experts = int(_first(text, "num_experts", "n_routed_experts", "num_local_experts", default=0) or 0)
    entry: dict[str, Any] = {
        "id": repo_id, "architecture": (config.get("architectures") or ["unknown"])[0],
        "layers": int(_first(text, "num_hidden_layers", "n_layer")), "hidden": hidden, "heads": heads,
        "kv_heads": int(_first(text, "num_key_value_heads", default=heads)),
        "head_dim": int(_first(text, "head_dim", default=hidden // heads)),
        "intermediate": int(_first(text, "moe_intermediate_size", "intermediate_size") if experts else _first(text, "intermediate_size", "ffn_dim")),
        "vocab": int(_first(text, "vocab_size")), "max_context": int(_first(text, "max_position_embeddings", "max_seq_len", default=4096)),
        "dtype": HUB_DTYPES.get(str(_first(config, "torch_dtype", "dtype", default="bfloat16")), "bfloat16"),
        "source": source, "tied_embeddings": bool(_first(config, "tie_word_embeddings", default=False)),
    }
    if experts:
        entry.update(experts=experts, experts_per_token=int(_first(text, "num_experts_per_tok", "top_k", default=1)))
        shared = _first(text, "shared_expert_intermediate_size")
        if shared:
            entry["shared_expert_intermediate"] = int(shared)
    for key, name in (("kv_lora_rank", "kv_lora_rank"), ("qk_rope_head_dim", "qk_rope_head_dim")):
        if text.get(name):
            entry[key] = int(text[name])
    entry.update(_sliding_layers(text))
    special = [k for k in ("attn_logit_softcapping",) if text.get(k)]
    if special:
        entry["special"] = special
    quant = config.get("quantization_config") if isinstance(config.get("quantization_config"), dict) else None
    notes = [f"'{repo_id}' is not in the catalog: its shape is read from {origin} ({source})"]
    if quant:
        method = str(quant.get("quant_method", "unknown")).lower()
        bits = float(quant.get("bits") or quant.get("w_bit") or (8 if "fp8" in method else 4))
        entry.update(quantization=method, weight_bits=bits)
        kept = _unconverted_params(entry, quant.get("modules_to_not_convert"))
        if kept:
            entry["unquantized_params"] = kept
    stored = sum(parameters.values())
    if stored and set(parameters) <= FLOAT_STORAGE and not experts:
        entry["params_b"] = {"total": stored / 1e9, "active": stored / 1e9}
    else:
        why = "the weights are stored packed" if stored else "the repo publishes no safetensors metadata"
        notes.append(f"parameter count computed from config.json's shape because {why}")
    return _spec(entry, catalog_id=None), notes

"""Reads a Hugging Face model folder (config.json + *.safetensors) into a ModelConfig and named tensors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import torch

from inference.models import SUPPORTED_ARCHITECTURES, ModelConfig


class HFFolderError(ValueError):
    """The folder is not a model this engine can run; the message says why."""


def read_config(folder: Path) -> ModelConfig:
    path = folder / "config.json"
    if not path.is_file():
        raise HFFolderError(f"{folder} has no config.json; pass a GGUF file or a Hugging Face model folder")
    raw = json.loads(path.read_text())
    arch = raw.get("model_type")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise HFFolderError(f"model_type {arch!r} is not supported (supported: {', '.join(SUPPORTED_ARCHITECTURES)})")
    scaling = raw.get("rope_scaling") or (raw.get("rope_parameters") or {})
    if scaling.get("rope_type", scaling.get("type", "default")) not in ("default", None):
        raise HFFolderError(f"rope scaling {scaling} is not supported by this engine")
    eos = raw.get("eos_token_id")
    gen_path = folder / "generation_config.json"
    if gen_path.is_file():
        eos = json.loads(gen_path.read_text()).get("eos_token_id", eos)
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    theta = raw.get("rope_theta") or (raw.get("rope_parameters") or {}).get("rope_theta", 10000.0)
    return ModelConfig(
        architecture=arch,
        hidden_size=raw["hidden_size"],
        num_layers=raw["num_hidden_layers"],
        num_heads=raw["num_attention_heads"],
        num_kv_heads=raw.get("num_key_value_heads") or raw["num_attention_heads"],
        intermediate_size=raw["intermediate_size"],
        vocab_size=raw["vocab_size"],
        rms_norm_eps=raw.get("rms_norm_eps", 1e-6),
        rope_theta=float(theta),
        max_position=raw.get("max_position_embeddings", 4096),
        attention_bias=arch == "qwen2" or bool(raw.get("attention_bias", False)),
        tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
        head_dim=raw.get("head_dim") or 0,
        eos_token_ids=eos_ids,
    )


def iter_tensors(folder: Path) -> Iterator[tuple[str, torch.Tensor]]:
    """(name without the "model." prefix, tensor) from every safetensors shard."""
    from safetensors import safe_open

    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise HFFolderError(f"{folder} has no *.safetensors weights")
    for file in files:
        with safe_open(str(file), framework="pt") as f:
            for key in f.keys():  # noqa: SIM118 - safe_open is not a dict
                if "rotary_emb.inv_freq" in key:
                    continue
                yield key.removeprefix("model."), f.get_tensor(key)

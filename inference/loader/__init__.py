"""Model loading: path -> (DecoderForCausalLM on the target device and dtype, ModelConfig, tokenizer).

Runs once per engine. Accepts a .gguf file, a Hugging Face safetensors folder, None/"default" for
the packaged default GGUF, or a packaged model's name (loader/default_model.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from inference.layers.rotary import RotaryEmbedding
from inference.loader import gguf_loader, hf_loader
from inference.loader.default_model import PACKAGED_MODELS, packaged_model, packaged_model_path
from inference.loader.tokenizer import load_folder_tokenizer, load_gguf_tokenizer
from inference.models import DecoderForCausalLM, ModelConfig


@dataclass
class LoadedModel:
    model: DecoderForCausalLM
    config: ModelConfig
    tokenizer: Any
    name: str


def resolve_model_path(model: str | Path | None) -> Path:
    packaged = packaged_model(model)
    if packaged is not None:
        return packaged_model_path(packaged)
    path = Path(str(model)).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"model {str(model)!r} not found: pass a .gguf file, a Hugging Face folder, "
                                f"'default', or one of {', '.join(PACKAGED_MODELS)}")
    return path


def load_weights(model: DecoderForCausalLM, tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
    """Copy HF-named tensors into the fused modules (q/k/v -> qkv_proj, gate/up -> gate_up_proj)."""
    cfg = model.cfg
    params = dict(model.named_parameters(remove_duplicate=False))
    fused = {"q_proj": ("qkv_proj", 0), "k_proj": ("qkv_proj", cfg.q_size), "v_proj": ("qkv_proj", cfg.q_size + cfg.kv_size),
             "gate_proj": ("gate_up_proj", 0), "up_proj": ("gate_up_proj", cfg.intermediate_size)}
    seen: set[str] = set()
    for name, tensor in tensors:
        if cfg.tie_word_embeddings and name == "lm_head.weight":
            continue
        parts = name.split(".")
        target, offset = name, None
        if len(parts) >= 2 and parts[-2] in fused:
            module, offset = fused[parts[-2]]
            target = ".".join(parts[:-2] + [module, parts[-1]])
        if target not in params:
            raise ValueError(f"weight {name} has no place in a {cfg.architecture} model")
        param = params[target]
        with torch.no_grad():
            if offset is None:
                if param.shape != tensor.shape:
                    raise ValueError(f"weight {name} has shape {tuple(tensor.shape)}, expected {tuple(param.shape)}")
                param.copy_(tensor)
            else:
                param[offset : offset + tensor.shape[0]].copy_(tensor)
        seen.add(name)
    missing = {n for n, _ in model.named_parameters()} - _covered(seen, fused)
    if missing:
        raise ValueError(f"the checkpoint lacks weights for: {', '.join(sorted(missing)[:5])}")


def _covered(seen: set[str], fused: dict[str, tuple[str, int]]) -> set[str]:
    out = set()
    for name in seen:
        parts = name.split(".")
        if len(parts) >= 2 and parts[-2] in fused:
            out.add(".".join(parts[:-2] + [fused[parts[-2]][0], parts[-1]]))
        else:
            out.add(name)
    return out


def load_model(model: str | Path | None, dtype: torch.dtype, device: str) -> LoadedModel:
    path = resolve_model_path(model)
    if path.is_file():
        reader = gguf_loader.open_gguf(path)
        cfg = gguf_loader.read_config(reader)
        tensors = gguf_loader.iter_tensors(reader, cfg)
        tokenizer = load_gguf_tokenizer(path) if "tokenizer.ggml.tokens" in reader.metadata else None
        packaged = packaged_model(model)
        name = packaged.name if packaged is not None else path.stem
    else:
        cfg = hf_loader.read_config(path)
        tensors = hf_loader.iter_tensors(path)
        tokenizer = load_folder_tokenizer(path)
        name = path.name
    net = empty_model(cfg, dtype, device)
    load_weights(net, tensors)  # copy_ casts each float32 tensor to the compute dtype on the way in
    return LoadedModel(net, cfg, tokenizer, name)


def empty_model(cfg: ModelConfig, dtype: torch.dtype, device: str) -> DecoderForCausalLM:
    """The model with uninitialised weights already in the compute dtype on the device (no float32 detour)."""
    with torch.device("meta"):
        net = DecoderForCausalLM(cfg).to(dtype)
    net = net.to_empty(device=device)
    net.tie_weights()
    net.rotary = RotaryEmbedding(cfg.head_dim, cfg.max_position, cfg.rope_theta).to(device)  # float32 tables
    return net.eval()

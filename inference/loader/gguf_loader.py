"""Reads a GGUF file (llama.cpp's format) into HF-named float tensors and a ModelConfig; runs once at load.

The header is parsed by loader/gguf_file.py; quantised tensors are dequantised with the `gguf` package's reference numpy kernels (F32, F16, BF16,
Q8_0, Q5_0, Q4_K, Q6_K and the other block types it knows) once, at load; the engine then computes in
a plain float dtype. llama.cpp's converter permutes Llama's Q/K rows for its interleaved RoPE; they
are permuted back so every architecture uses the same "rotate half" RoPE.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from inference.loader.gguf_file import GGUFFile, GGUFTensor
from inference.models import SUPPORTED_ARCHITECTURES, ModelConfig

_LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
}
_GLOBAL_NAMES = {"token_embd.weight": "embed_tokens.weight", "output_norm.weight": "norm.weight",
                 "output.weight": "lm_head.weight"}


class GGUFError(ValueError):
    """The file is not a GGUF this engine can run; the message says why."""


def _field(reader: GGUFFile, key: str, default: Any = None) -> Any:
    return reader.metadata.get(key, default)


def read_config(reader: GGUFFile) -> ModelConfig:
    arch = _field(reader, "general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise GGUFError(f"GGUF architecture {arch!r} is not supported (supported: {', '.join(SUPPORTED_ARCHITECTURES)})")

    def need(key: str) -> Any:
        value = _field(reader, f"{arch}.{key}")
        if value is None:
            raise GGUFError(f"GGUF metadata lacks {arch}.{key}")
        return value

    names = {t.name for t in reader.tensors}
    embd = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if embd is None:
        raise GGUFError("GGUF has no token_embd.weight tensor")
    eos = [int(x) for x in (_field(reader, "tokenizer.ggml.eos_token_id"), _field(reader, "tokenizer.ggml.eot_token_id"))
           if x is not None]
    if _field(reader, f"{arch}.rope.scaling.type") not in (None, "none"):
        raise GGUFError("GGUF files with RoPE scaling are not supported by this engine")
    heads = int(need("attention.head_count"))
    return ModelConfig(
        architecture=arch,
        hidden_size=int(need("embedding_length")),
        num_layers=int(need("block_count")),
        num_heads=heads,
        num_kv_heads=int(_field(reader, f"{arch}.attention.head_count_kv", heads)),
        intermediate_size=int(need("feed_forward_length")),
        vocab_size=int(embd.shape[-1]),
        rms_norm_eps=float(need("attention.layer_norm_rms_epsilon")),
        rope_theta=float(_field(reader, f"{arch}.rope.freq_base", 10000.0)),
        max_position=int(need("context_length")),
        attention_bias="blk.0.attn_q.bias" in names,
        tie_word_embeddings="output.weight" not in names,
        head_dim=int(_field(reader, f"{arch}.attention.key_length", 0) or 0),
        eos_token_ids=sorted(set(eos)),
    )


def _unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's Q/K row permutation (its reshape(n, 2, d) swap, run backwards)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def iter_tensors(reader: GGUFFile, cfg: ModelConfig) -> Iterator[tuple[str, torch.Tensor]]:
    """(HF name, float32 tensor) for every tensor in the file, dequantised on two threads (numpy drops the GIL)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield from pool.map(lambda t: _convert(t, cfg), reader.tensors)


def _convert(t: GGUFTensor, cfg: ModelConfig) -> tuple[str, torch.Tensor]:
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import dequantize

    qtype = GGMLQuantizationType(t.ggml_type)
    try:
        array = dequantize(t.data, qtype)
    except NotImplementedError as exc:
        raise GGUFError(f"tensor {t.name} uses {qtype.name}, which cannot be dequantised: {exc}") from exc
    array = np.asarray(array, dtype=np.float32).reshape(tuple(reversed(t.shape)))
    if not array.flags.writeable:  # F32 tensors come back as views of the read-only mmap
        array = array.copy()
    if t.name.startswith("blk."):
        _, layer, rest = t.name.split(".", 2)
        if rest not in _LAYER_NAMES:
            raise GGUFError(f"unexpected tensor {t.name} in a {cfg.architecture} GGUF")
        name = f"layers.{layer}.{_LAYER_NAMES[rest]}"
        if cfg.architecture == "llama" and rest in ("attn_q.weight", "attn_k.weight"):
            array = _unpermute(array, cfg.num_heads if rest == "attn_q.weight" else cfg.num_kv_heads)
    elif t.name in _GLOBAL_NAMES:
        name = _GLOBAL_NAMES[t.name]
    elif t.name == "rope_freqs.weight":
        raise GGUFError("GGUF files with rope_freqs (RoPE scaling) are not supported by this engine")
    else:
        raise GGUFError(f"unexpected tensor {t.name} in a {cfg.architecture} GGUF")
    return name, torch.from_numpy(array)


def open_gguf(path: Path) -> GGUFFile:
    try:
        return GGUFFile(path)
    except (ValueError, OSError, struct.error) as exc:
        raise GGUFError(f"{path} is not a readable GGUF file: {exc}") from exc

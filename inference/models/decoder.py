"""The Qwen2/Llama decoder: RMSNorm, RoPE, grouped-query attention over the paged cache, SwiGLU MLP.

Built once by the loader; its forward runs once per engine step over the flat batch of every token
scheduled in that step (prefill chunks and decode tokens together). Q/K/V and gate/up projections are
fused into single matmuls at load time: fewer, larger matmuls are what makes CPU decoding fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from inference.layers.attention import AttentionMetadata, PagedAttention
from inference.layers.linear import Linear
from inference.layers.norm import RMSNorm
from inference.layers.rotary import RotaryEmbedding, apply_rotary

# Runs every decoder layer for a decode-only step: (hidden states, rotary cos/sin, metadata) -> hidden states.
DecodeLayers = Callable[[torch.Tensor, tuple[torch.Tensor, torch.Tensor], AttentionMetadata], torch.Tensor]


@dataclass
class ModelConfig:
    """Architecture hyper-parameters, read from GGUF metadata or a HF config.json."""

    architecture: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    intermediate_size: int
    vocab_size: int
    rms_norm_eps: float
    rope_theta: float
    max_position: int
    attention_bias: bool
    tie_word_embeddings: bool
    head_dim: int = 0
    eos_token_ids: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.head_dim:
            self.head_dim = self.hidden_size // self.num_heads
        assert self.num_heads % self.num_kv_heads == 0, "query heads must be a multiple of KV heads"

    @property
    def q_size(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_kv_heads * self.head_dim


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.qkv_proj = Linear(cfg.hidden_size, cfg.q_size + 2 * cfg.kv_size, bias=cfg.attention_bias)
        self.o_proj = Linear(cfg.q_size, cfg.hidden_size, bias=False)
        self.attn = PagedAttention(cfg.num_heads, cfg.num_kv_heads, cfg.head_dim)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], meta: AttentionMetadata) -> torch.Tensor:
        c = self.cfg
        qkv = self.qkv_proj(x)
        # q and k sit side by side in the fused output: rotate them as one [T, H + Hkv, D] tensor
        qk = apply_rotary(qkv[:, : c.q_size + c.kv_size].view(-1, c.num_heads + c.num_kv_heads, c.head_dim), *rope)
        q, k = qk.split([c.num_heads, c.num_kv_heads], dim=1)
        v = qkv[:, c.q_size + c.kv_size :].view(-1, c.num_kv_heads, c.head_dim)
        o = self.attn(q, k, v, meta)
        out: torch.Tensor = self.o_proj(o.flatten(1))
        return out


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.intermediate = cfg.intermediate_size
        self.gate_up_proj = Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=False)
        self.down_proj = Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).split(self.intermediate, dim=-1)
        out: torch.Tensor = self.down_proj(F.silu(gate) * up)
        return out


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], meta: AttentionMetadata) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), rope, meta)
        out: torch.Tensor = x + self.mlp(self.post_attention_layernorm(x))
        return out


class DecoderForCausalLM(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.max_position, cfg.rope_theta)
        self.lm_head = Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        # every decoder layer of a decode-only step in one call; set by models/fused_decode.py
        self.fused_decoder: DecodeLayers | None = None
        self.tie_weights()

    def tie_weights(self) -> None:
        """Share the embedding with the output head when the checkpoint says so (again after `to_empty`)."""
        if self.cfg.tie_word_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, meta: AttentionMetadata,
                logits_rows: torch.Tensor) -> torch.Tensor:
        """Hidden states for all T tokens, but the output head only for `logits_rows` (the sampling positions)."""
        x = self.embed_tokens(input_ids)
        rope = self.rotary.lookup(positions)
        if self.fused_decoder is not None and not meta.prefills:
            x = self.fused_decoder(x, rope, meta)
        else:
            for layer in self.layers:
                x = layer(x, rope, meta)
        x = self.norm(x.index_select(0, logits_rows))
        logits: torch.Tensor = self.lm_head(x)
        return logits

    def prepare_for_inference(self, int8: bool = False, int8_blocks_too: bool = False) -> None:
        """Once, after loading: prepack (or with `int8`, quantise) the projections for the CPU kernels
        (layers/linear.py), adding block-scaled int8 copies for decode with `int8_blocks_too`. A tied output head is untied first: the embedding keeps its plain rows,
        the head gets a packed copy."""
        if self.cfg.tie_word_embeddings and self.lm_head.weight is self.embed_tokens.weight:
            self.lm_head.weight = nn.Parameter(self.embed_tokens.weight.detach().clone(), requires_grad=False)
        for module in self.modules():
            if isinstance(module, Linear):
                module.pack(int8, int8_blocks_too)

    def weight_bytes_per_token(self) -> int:
        """Bytes of weights one decode step reads: every projection and norm, not the embedding table."""
        linear = sum(m.weight_bytes() for m in self.modules() if isinstance(m, Linear))
        other = sum(p.numel() * p.element_size() for n, p in self.named_parameters()
                    if "proj.weight" not in n and n not in ("lm_head.weight", "embed_tokens.weight"))
        return linear + other

    def decoder_layers(self) -> list[DecoderLayer]:
        """The layers with their type (nn.ModuleList hands them out as plain Modules)."""
        return [layer for layer in self.layers if isinstance(layer, DecoderLayer)]

    def attention_layers(self) -> list[PagedAttention]:
        return [layer.self_attn.attn for layer in self.decoder_layers()]

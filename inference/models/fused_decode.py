"""The CPU fast path for decode-only steps: every decoder layer in one C++ call (csrc/decode_layers.cpp).

When and why: a batch-1 decode step of the default model streams ~1 GB of bf16 weights (~45 ms at
this machine's bandwidth) and spent ~20 ms more in eager PyTorch between the projections: two norms,
rotary, two cache writes, attention and SwiGLU, ~60 small ops and their Python per layer, for a
[1, 896] row. The C++ loop calls the same projection kernels (layers/linear.py) and does the rest in
plain loops. Prefill and mixed steps and CUDA keep the Python reference path, which stays the
definition of the numerics: tests/inference/test_fused_decode.py compares the two.

The extension is built by inference/extension.py; if it cannot be built, the engine says why once and
keeps the reference path.
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from inference.extension import load_extension
from inference.layers import int8_blocks
from inference.layers.attention import AttentionMetadata
from inference.layers.linear import Linear
from inference.models.decoder import DecoderForCausalLM

log = logging.getLogger(__name__)


DENSE, PACKED, INT8 = 0, 1, 2  # csrc's Layout


def projection_layout(linears: list[Linear]) -> int | None:
    """The one weight layout every projection shares (csrc's Layout), or None if they differ."""
    layouts = {INT8 if m.packed_int8 is not None else PACKED if m.packed is not None else DENSE for m in linears}
    return layouts.pop() if len(layouts) == 1 else None


class FusedDecoder:
    """Runs a model's decoder layers for a decode-only step through the extension."""

    def __init__(self, model: DecoderForCausalLM, module: Any, layout: int) -> None:
        self.model, self.module, self.layout = model, module, layout
        self._tensors: list[torch.Tensor] = []
        self._int8: list[Any] = []  # fbgemm-prepacked weights, four per layer, under the int8 layout
        self._bound_to: torch.Tensor | None = None
        self.steps = 0  # decode steps run here (tests check that the fast path really ran)

    @classmethod
    def for_model(cls, model: DecoderForCausalLM) -> tuple[FusedDecoder | None, str]:
        """A FusedDecoder, or None and why this model keeps the reference path."""
        if next(model.parameters()).device.type != "cpu":
            return None, "not a CPU model"
        linears = [m for layer in model.decoder_layers() for m in (layer.self_attn.qkv_proj, layer.self_attn.o_proj,
                                                         layer.mlp.gate_up_proj, layer.mlp.down_proj)]
        layout = projection_layout(linears)
        if layout is None:
            return None, "the projections do not share one weight layout"
        module, why = load_extension()
        if module is None:
            return None, why
        return cls(model, module, layout), ""

    def _weight_of(self, linear: Linear) -> torch.Tensor:
        """A projection's weight as the layout passes it (int8 weights go separately, prepacked)."""
        if self.layout == DENSE:
            return linear.weight
        if self.layout == PACKED and linear.packed is not None:
            return linear.packed
        return torch.empty(0)

    def layer_tensors(self) -> tuple[list[torch.Tensor], list[Any]]:
        """17 tensors per layer in csrc's order, and the int8 weights; rebuilt when new caches are bound."""
        first = self.model.decoder_layers()[0].self_attn.attn.k_cache
        if self._bound_to is not first:
            empty = torch.empty(0)
            weight = self._weight_of
            self._tensors, self._int8 = [], []
            for layer in self.model.decoder_layers():
                attn, mlp = layer.self_attn, layer.mlp
                qkv, o, gate_up, down = attn.qkv_proj, attn.o_proj, mlp.gate_up_proj, mlp.down_proj
                k_cache, v_cache = attn.attn.k_cache, attn.attn.v_cache
                assert k_cache is not None and v_cache is not None, "KV cache not bound"
                self._tensors += [layer.input_layernorm.weight, weight(qkv), empty if qkv.bias is None else qkv.bias,
                                  weight(o), layer.post_attention_layernorm.weight, weight(gate_up), weight(down),
                                  k_cache, v_cache]
                for m in (qkv, o, gate_up, down):
                    self._tensors += [empty, empty] if m.qweight is None or m.qscales is None else [m.qweight, m.qscales]
                if self.layout == INT8:
                    self._int8 += [m.packed_int8 for m in (qkv, o, gate_up, down)]
            self._bound_to = first
        return self._tensors, self._int8

    def __call__(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor], meta: AttentionMetadata) -> torch.Tensor:
        cfg = self.model.cfg
        cos, sin = (t.view(t.shape[0], -1) for t in rope)
        self.steps += 1
        tensors, int8 = self.layer_tensors()
        out: torch.Tensor = self.module.decode_layers(x, cos, sin, meta.slot_mapping, meta.decode_block_tables,
                                         meta.decode_context_lens, tensors, int8, cfg.num_heads,
                                         cfg.num_kv_heads, cfg.head_dim, cfg.rms_norm_eps, self.layout,
                                         int8_blocks.ISAS.get(int8_blocks.kernel_choice().isa, -1), int8_blocks.max_rows())
        return out


def enable_fused_decode(model: DecoderForCausalLM) -> str:
    """Route `model`'s decode-only steps through the compiled layer loop, once after loading (after
    `prepare_for_inference`, whose weight layout it reads). Returns why the model keeps the Python
    reference layers instead, or "" when the fused path is on."""
    model.fused_decoder, why = FusedDecoder.for_model(model)
    return why

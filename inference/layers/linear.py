"""The engine's projection layer: one `Linear`, three weight layouts chosen once after loading (`pack`).

- dense: plain `F.linear` (CUDA, tests, anything oneDNN cannot take);
- oneDNN-prepacked (CPU, bf16 or f32): the weight reordered once into oneDNN's blocked layout, the same
  prepacking torch.compile's CPU "freezing" does. Measured on a 2-core AVX512-BF16 machine: bf16
  [1, 896] @ [896, 151936] took 64 ms through F.linear and 39 ms packed; f32 [16, 896] @ [896, 151936]
  264 ms against 74 ms.
- int8 (CPU, W8A8): weights quantised per output channel to int8 and prepacked for fbgemm; activations
  quantised per token on the fly. Why: on CPUs without native bf16 (the 2-core AVX2 Zen 3 machine),
  float32 GEMMs top out near 65 GFLOP/s while fbgemm's int8 GEMM measured 220-300 GOP/s at 16-512 rows,
  and a batch-1 step reads a quarter of the float32 bytes. Accuracy against the float32 path on the
  default model is pinned by tests/inference/test_int8.py.

- int8 blocks (CPU, decode): layers/int8_blocks.py. Kept beside the oneDNN-prepacked bf16 weight,
  which prefill chunks use; calls of up to `int8_blocks.max_rows()` rows take the int8 copy.

Packing drops the plain weight so memory does not double.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from inference.layers import int8_blocks


def can_pack(weight: torch.Tensor) -> bool:
    """oneDNN reorders float32 weights on any x86 CPU, bf16 ones only where the CPU computes in bf16."""
    if weight.device.type != "cpu" or not torch.backends.mkldnn.is_available():
        return False
    if weight.dtype == torch.bfloat16:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return weight.dtype == torch.float32


def int8_available() -> bool:
    """fbgemm's int8 kernels ship in torch's x86 CPU wheels."""
    return "fbgemm" in torch.backends.quantized.supported_engines


def pack_int8(weight: torch.Tensor) -> Any:
    """Symmetric per-output-channel int8 weight, prepacked for fbgemm's dynamic-activation GEMM."""
    w = weight.detach().float()
    scales = (w.abs().amax(dim=1) / 127.0).clamp_min(1e-12).double()
    zero_points = torch.zeros(w.shape[0], dtype=torch.long)
    # torch's quantized-tensor API warns that it is deprecated; it is still how fbgemm's prepacked
    # int8 GEMM is reached from a stock wheel (torchao's CPU int8 path is a naive loop on AVX2).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        qweight = torch.quantize_per_channel(w, scales, zero_points, 0, torch.qint8)
        return torch.ops.quantized.linear_prepack(qweight, None)


def int8_linear(x: torch.Tensor, packed: Any, bias: torch.Tensor | None) -> torch.Tensor:
    """x @ W.T (+ bias) with int8 weights and per-token int8 activations.

    fbgemm quantises its whole input with one scale; dividing each row by its own max first makes that
    scale per token (one long prompt's outlier token no longer coarsens every other token), and the
    product is scaled back row by row. `reduce_range` keeps activations to 7 bits so AVX2's 16-bit
    pairwise sums cannot saturate on CPUs without VNNI.
    """
    if x.numel() == x.shape[-1]:  # one token (batch-1 decode): fbgemm's per-tensor scale already is per token
        y: torch.Tensor = torch.ops.quantized.linear_dynamic(x, packed, True)
    else:
        row_max = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12)
        y = torch.ops.quantized.linear_dynamic(x / row_max, packed, True).mul_(row_max)
    return y if bias is None else y.add_(bias)


class Linear(nn.Linear):
    packed: torch.Tensor | None = None  # oneDNN blocked layout, same dtype as the weight
    packed_int8: Any = None  # fbgemm prepacked int8 weight
    qweight: torch.Tensor | None = None  # int8 blocks (decode steps), beside `packed`
    qscales: torch.Tensor | None = None

    def pack(self, int8: bool = False, int8_blocks_too: bool = False) -> None:
        """Reorder (or with `int8`, quantise) the weight for the CPU kernels; a no-op where they do not apply.
        `int8_blocks_too` adds the block-scaled int8 copy that calls of few rows use (Config checked the kernel)."""
        if self.packed is not None or self.packed_int8 is not None:
            return
        if int8_blocks_too and int8_blocks.can_quantize(self.weight):
            self.qweight, self.qscales = int8_blocks.for_kernel(self.weight)
        if int8:  # Config has already checked that this is a CPU with fbgemm
            self.packed_int8 = pack_int8(self.weight)
        elif can_pack(self.weight):
            self.packed = torch.ops.mkldnn._reorder_linear_weight(self.weight.detach(), 1)
        else:
            return
        self.weight = nn.Parameter(torch.empty(0, dtype=self.weight.dtype), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.qweight is not None and self.qscales is not None and x.dim() == 2 and x.shape[0] <= int8_blocks.max_rows():
            return int8_blocks.int8_linear(x, self.qweight, self.qscales, self.bias)
        if self.packed_int8 is not None:
            return int8_linear(x, self.packed_int8, self.bias)
        if self.packed is not None:
            out: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")
            return out
        return F.linear(x, self.weight, self.bias)

    def weight_bytes(self) -> int:
        """Bytes a decode step's forward reads for the weight (int8: one per element plus the float scales)."""
        if self.qweight is not None and self.qscales is not None:
            return self.qweight.numel() + 4 * self.qscales.numel()
        if self.packed_int8 is not None:
            return self.in_features * self.out_features + 8 * self.out_features
        return self.in_features * self.out_features * (self.packed if self.packed is not None else self.weight).element_size()

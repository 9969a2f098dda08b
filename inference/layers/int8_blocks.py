"""Block-scaled int8 weights for decode steps: the kernel choice, the weight format, the reference math.

When and why: a decode step multiplies a few rows (one per running sequence) by every weight, so its
time is the weights' bytes over memory bandwidth. The GGUF's projections are 4-6 bit; dequantised to
bf16 they cost 2 bytes a weight, here 1 byte plus a float32 scale per GROUP inputs of a weight row
(1.03 bytes). The activations are quantised per row and per GROUP as well, and each group's dot product
is exact int32 arithmetic (csrc/int8_blocks.cpp: AMX `tdpbssd`, AVX512-VNNI `vpdpbusd`, or AVX2
`vpmaddubsw`). Prefill chunks (many rows, compute-bound) keep the bf16 weights on oneDNN/AMX: `Linear`
holds both and picks by the number of rows (`max_rows`).

`reference_linear` is the definition of the numerics in plain torch; every kernel is tested against it
(tests/inference/test_int8_blocks.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import torch

from inference.cpu import cpu_flags
from inference.extension import load_extension  # the compiled module holds both kernels

GROUP = 128  # csrc/int8_blocks.h kGroup
ISAS = {"avx2": 1, "avx512_vnni": 2, "amx": 3}  # csrc/int8_blocks.h Isa
TILED = frozenset({"amx", "avx512_vnni"})  # kernels that take `tile_weights`' layout (16-row weight tiles)
# up to how many rows each kernel beat oneDNN's bf16 GEMM on the machines measured (inference/README.md,
# "Profile" and "AVX512-VNNI on tiles"); more rows go to the bf16 weights. VNNI beat it at every size
# measured, 1-512 rows, which covers every prefill chunk of the default max_num_batched_tokens (512).
MAX_ROWS = {"amx": 64, "avx512_vnni": 512, "avx2": 4}
ISA_ENV = "INFRAWIKI_CPU_ISA"


@dataclass(frozen=True)
class KernelChoice:
    """Which int8 kernel the projections use (`isa`: a key of ISAS, or "" for none) and why."""

    isa: str
    why: str


@cache
def kernel_choice() -> KernelChoice:
    """The widest kernel this CPU runs, or the one $INFRAWIKI_CPU_ISA names ("avx2" forces the fallback,
    as on an AVX2-only machine; "none" turns the int8 path off)."""
    flags = cpu_flags()
    has = {"amx": {"amx_tile", "amx_int8", "avx512f", "avx512bw"} <= flags,
           "avx512_vnni": {"avx512f", "avx512bw", "avx512_vnni"} <= flags, "avx2": {"avx2", "fma"} <= flags}
    forced = os.environ.get(ISA_ENV, "").strip().lower()
    if forced == "none":
        return KernelChoice("", f"{ISA_ENV}=none")
    if forced:
        if forced not in has:
            raise ValueError(f"{ISA_ENV} must be one of {', '.join([*has, 'none'])}; got {forced!r}")
        if not has[forced]:
            return KernelChoice("", f"{ISA_ENV}={forced} but this CPU lacks it")
        return KernelChoice(forced, f"{ISA_ENV}={forced}")
    if has["amx"]:
        return KernelChoice("amx", "CPU has AMX-INT8: tdpbssd, 16x16x64 products per instruction")
    if has["avx512_vnni"]:
        return KernelChoice("avx512_vnni", "CPU has AVX512-VNNI: vpdpbusd, 64 byte products per instruction")
    if has["avx2"]:
        return KernelChoice("avx2", "CPU has AVX2 but not AVX512-VNNI: vpmaddubsw + vpmaddwd")
    return KernelChoice("", "CPU has neither AVX512-VNNI nor AVX2")


def max_rows() -> int:
    """Calls of up to this many rows take the int8 copy (0 where no kernel runs)."""
    return MAX_ROWS.get(kernel_choice().isa, 0)


def can_quantize(weight: torch.Tensor) -> bool:
    """The kernels take weights whose rows split into whole groups (and, for the tiled ones, whole 16-row
    tiles)."""
    rows_ok = weight.shape[0] % 16 == 0 or kernel_choice().isa not in TILED
    return weight.dim() == 2 and weight.shape[1] % GROUP == 0 and rows_ok and weight.device.type == "cpu"


def for_kernel(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`weight` quantised and laid out for the chosen kernel."""
    return laid_out(*quantize_weight(weight), kernel_choice().isa)


def laid_out(q: torch.Tensor, scales: torch.Tensor, isa: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Quantised weights in `isa`'s layout: tiled for AMX and AVX512-VNNI, row-major for AVX2."""
    return tile_weights(q, scales) if isa in TILED else (q, scales)


def tile_weights(q: torch.Tensor, scales: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The AMX and AVX512-VNNI kernels' layout, same shapes: per 16 weight rows and 64 inputs a 1 KiB tile whose row r
    holds inputs 4r..4r+3 of each of the 16 rows; scales group-major within each 16 rows."""
    n, k = q.shape
    tiled = q.view(n // 16, 16, k // 64, 16, 4).permute(0, 2, 3, 1, 4).contiguous().view(n, k)
    return tiled, scales.view(n // 16, 16, k // GROUP).permute(0, 2, 1).contiguous().view(n, k // GROUP)


def quantize_weight(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 [N, K] and float32 scales [N, K / GROUP]: symmetric, amax / 127 per group of a row."""
    n, k = weight.shape
    groups = weight.detach().float().view(n, k // GROUP, GROUP)
    scales = groups.abs().amax(dim=-1) / 127.0
    inv = torch.where(scales > 0, 1.0 / scales.clamp_min(1e-30), torch.zeros_like(scales))
    q = torch.round(groups * inv.unsqueeze(-1)).clamp_(-127, 127).to(torch.int8)
    return q.view(n, k).contiguous(), scales.contiguous()


def quantize_activations(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's groups as the kernels quantise them: q = round(x * (127 / amax)), scale = amax / 127."""
    m, k = x.shape
    groups = x.float().view(m, k // GROUP, GROUP)
    amax = groups.abs().amax(dim=-1)
    inv = torch.where(amax > 0, 127.0 / amax, torch.zeros_like(amax))
    return torch.round(groups * inv.unsqueeze(-1)), amax / 127.0


def reference_linear(x: torch.Tensor, q: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """The kernels' result in plain torch: exact group dot products, scaled and summed in float64."""
    m, k = x.shape
    qx, sx = quantize_activations(x)
    dots = torch.einsum("mgk,ngk->mng", qx.double(), q.view(q.shape[0], k // GROUP, GROUP).double())
    y = (dots * (sx.double().unsqueeze(1) * scales.double().unsqueeze(0))).sum(-1).float()
    return (y if bias is None else y + bias.float()).to(x.dtype)


@cache
def _extension() -> object | None:
    module, _ = load_extension()
    return module


def available() -> KernelChoice:
    """The kernel choice, with the reason none runs where the extension does not build."""
    choice = kernel_choice()
    if choice.isa and _extension() is None:
        return KernelChoice("", f"the C++ extension did not build: {load_extension()[1]}")
    return choice


def int8_linear(x: torch.Tensor, q: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """x @ W.T (+ bias) through the chosen kernel (call only where `available().isa` is set)."""
    module = _extension()
    assert module is not None, "int8_linear without the extension"
    out: torch.Tensor = module.int8_linear(x.contiguous(), q, scales, bias,  # type: ignore[attr-defined]
                                           ISAS[kernel_choice().isa])
    return out

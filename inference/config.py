"""Engine configuration, built once when an `LLM` or the server starts.

A dataclass with asserted invariants (nano-vllm style): a bad combination fails here, at start-up,
with a message that names the knob, rather than deep inside a forward pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch

from inference.cpu import cpu_has_fast_bf16
from inference.layers import int8_blocks
from inference.layers.linear import int8_available

QUANTIZATIONS = ("auto", "none", "int8", "int8_decode")


def default_device() -> str:
    """$INFRAWIKI_DEVICE, else "cpu": where an engine runs when nothing names a device (serve, bench, and
    the engine tests, which inference/gpu_check.sh runs on "cuda" this way)."""
    return os.environ.get("INFRAWIKI_DEVICE", "cpu")


def resolve_dtype(dtype: str, device: str) -> torch.dtype:
    """Pick the compute dtype; "auto" is bf16 where the hardware does bf16 fast, else float32.

    Measured on the 2-core AVX512-BF16 reference CPU: a 256x896 @ 896x4864 matmul takes 5.7 ms in
    bf16 against 36 ms in f32, and the bf16 weights halve the bytes each decode step reads.
    """
    names = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    if dtype == "auto":
        if device.startswith("cuda") or cpu_has_fast_bf16():
            return torch.bfloat16
        return torch.float32
    if dtype not in names:
        raise ValueError(f"dtype must be one of auto, {', '.join(names)}; got {dtype!r}")
    return names[dtype]


@dataclass
class Config:
    """Everything the engine needs to know before it loads a model.

    `model` is a GGUF file, a Hugging Face safetensors folder, or None/"default" for the packaged
    Qwen2.5-Coder-0.5B-Instruct GGUF. KV-cache size is `num_kvcache_blocks` blocks of `block_size`
    tokens; when not given it is derived from `kv_cache_memory_gib`.

    `quantization`: "none" keeps dense weights in the compute dtype (exact against transformers);
    "int8" runs the projections as W8A8 int8 on the CPU (layers/linear.py); "int8_decode" keeps the
    dense weights for prefill and adds block-scaled int8 copies that steps of few rows (decode) use
    (layers/int8_blocks.py). "auto", when both dtype and quantization were left to the engine on a CPU:
    int8 where the CPU would otherwise compute in float32 (no native bf16), the case where int8 is ~4x
    faster; int8_decode where it computes in bf16 and has an AMX or AVX512-VNNI block kernel (on the 2-core
    AVX512-VNNI machine, 0.5B model: 1.8x the dense bf16 engine's throughput, and next-token
    distributions 12x closer to dense bf16 than int8's: mean KL 0.0014 against 0.0177, inference/README.md);
    dense bf16 elsewhere. An explicit dtype means dense weights.

    `fused_decode`: run decode-only steps on the CPU through the compiled layer loop
    (models/fused_decode.py) when it builds; False keeps every step on the Python reference path.
    """

    model: str | None = None
    device: str = field(default_factory=default_device)
    dtype: str = "auto"
    # 8 tokens, not the usual 16: a sequence wastes half a block on average, and on the bench workload
    # that was 5.3 % of the cache at 16 and 2.3 % at 8; the CPU attention reads row by row through the
    # block table, and alternating runs measured no throughput difference (median ratio 1.03)
    block_size: int = 8
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 512
    max_model_len: int = 4096
    num_kvcache_blocks: int | None = None
    kv_cache_memory_gib: float = 1.0
    enable_prefix_caching: bool = True
    quantization: str = "auto"
    fused_decode: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.device != "cpu" and not self.device.startswith("cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got {self.device!r}")
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError("device='cuda' was asked for but torch sees no CUDA device")
        if self.block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {self.block_size}")
        if self.max_num_seqs < 1:
            raise ValueError(f"max_num_seqs must be >= 1, got {self.max_num_seqs}")
        if self.max_num_batched_tokens < 1:
            raise ValueError(f"max_num_batched_tokens must be >= 1, got {self.max_num_batched_tokens}")
        if self.max_model_len < 2:
            raise ValueError(f"max_model_len must be >= 2, got {self.max_model_len}")
        if self.quantization not in QUANTIZATIONS:
            raise ValueError(f"quantization must be one of {', '.join(QUANTIZATIONS)}; got {self.quantization!r}")
        if self.quantization == "int8":
            if self.device != "cpu":
                raise ValueError("quantization='int8' is a CPU path (fbgemm); use 'none' on CUDA")
            if self.dtype not in ("auto", "float32"):
                raise ValueError(f"quantization='int8' computes activations in float32; drop dtype={self.dtype!r}")
            if not int8_available():
                raise ValueError("quantization='int8' needs torch's fbgemm kernels (x86 CPU wheels); use 'none'")
        if self.quantization == "int8_decode":
            if self.device != "cpu":
                raise ValueError("quantization='int8_decode' is a CPU path; use 'none' on CUDA")
            if not int8_blocks.kernel_choice().isa:
                raise ValueError(f"quantization='int8_decode' has no kernel here: {int8_blocks.kernel_choice().why}")
        if self.num_kvcache_blocks is not None and self.num_kvcache_blocks * self.block_size < self.max_model_len:
            raise ValueError(
                f"num_kvcache_blocks={self.num_kvcache_blocks} x block_size={self.block_size} cannot hold one "
                f"sequence of max_model_len={self.max_model_len} tokens; raise the blocks or lower max_model_len"
            )

    @property
    def int8(self) -> bool:
        """Whether the projections run as int8 (see `quantization`)."""
        if self.quantization == "auto":
            return (self.dtype == "auto" and self.device == "cpu" and int8_available()
                    and resolve_dtype("auto", "cpu") == torch.float32)
        return self.quantization == "int8"

    @property
    def int8_decode(self) -> bool:
        """Whether decode steps use block-scaled int8 copies of the projections (see `quantization`)."""
        if self.quantization == "auto":
            return (self.dtype == "auto" and self.device == "cpu" and resolve_dtype("auto", "cpu") == torch.bfloat16
                    and int8_blocks.kernel_choice().isa in ("amx", "avx512_vnni"))
        return self.quantization == "int8_decode"

    @property
    def torch_dtype(self) -> torch.dtype:
        """Compute dtype of activations, the KV cache and dense weights (float32 under int8)."""
        return torch.float32 if self.int8 else resolve_dtype(self.dtype, self.device)

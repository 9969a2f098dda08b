"""GPU memory sizing: weights, KV cache per token, activations, and what is left for the KV cache.

Runs for every candidate configuration the advisor considers. The accounting follows what vLLM
prints at start-up ("model weights take X GiB; non_torch_memory takes Y GiB; PyTorch activation peak
memory takes Z GiB; the rest of the memory reserved for KV Cache is W GiB"): everything inside
`total_gpu_memory x gpu_memory_utilization`, per GPU, under tensor (TP) and pipeline (PP) parallelism.
Which of those terms an engine release has, and their sizes, are the release's own accounting
(advisor.memory_accounting, data with sources): whether it profiles a forward pass, the bytes its dummy
sampler pass holds per logit, its non-torch memory with one GPU and with several, and the share of its
memory fraction it really gives out.

The forward-pass activation model charges ~6 fp16 copies of the hidden state and ~3 of the MLP
intermediate per profiled token; a release line scales it. It was set by hand on two V0 start-up logs of an
8B Llama (14.99 GiB weights; V0's vllm/worker/worker.py prints this format after 0.6.3, as in 0.8.0):
- "PyTorch activation peak memory takes 0.22GiB" on a 22.07 GiB card at a 131072-token context, where V0
  turns chunked prefill on (512-token chunks: vllm/engine/arg_utils.py#L936-L952 and vllm/config.py#L983 at
  v0.6.3): https://github.com/oracle-samples/oci-data-science-ai-samples/blob/03135b92e0d7488b40f81f19d2da77d287846b6e/ai-quick-actions/troubleshooting-tips.md
- "PyTorch activation peak memory takes 1.19GiB" on a 79.14 GiB card. Unverified: this log was found only
  quoted in notes that name neither the GPU, the batch nor where it came from; the earlier note's "A100-80GB
  with long profiling batches" could not be traced to a public page.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.catalog import Gpu
from advisor.memory_accounting import Line
from advisor.model_specs import ModelSpec

GIB = 1024**3
BLOCK_TOKENS = 16  # KV block size assumed for an engine whose profile states none
GROUP_SIZE = 128  # AWQ/GPTQ default group size: one fp16 scale + one 4-bit zero per group
# OCP Microscaling (MX) v1.0 (https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf):
# MXFP4 stores FP4 (E2M1) elements in blocks of 32 sharing one 8-bit E8M0 scale, so 4 + 8/32 = 4.25 bits per weight,
# the figure the gpt-oss model card gives for its MoE weights ("quantized to 4.25 bits per parameter",
# https://arxiv.org/abs/2508.10925)
MX_BLOCK, MX_SCALE_BITS = 32, 8


def effective_weight_bits(bits: float, method: str | None) -> float:
    """Storage bits per quantized weight including group scales and zeros."""
    if method in {"awq", "gptq", "int4_awq", "bitsandbytes", "bitsandbytes-nf4"} and bits <= 4:
        return bits + (16 + 4) / GROUP_SIZE
    if method == "mxfp4" and bits <= 4:
        return bits + MX_SCALE_BITS / MX_BLOCK
    return bits


def block_weight_bytes(model: ModelSpec, bits: float, method: str | None) -> float:
    """Bytes of the transformer blocks' weights: `bits` per weight except the modules the checkpoint leaves
    unquantized (ModelSpec.unquantized_params, e.g. gpt-oss's attention and router), which stay in 16 bit."""
    kept = model.unquantized_params if bits < 16 else 0.0
    return (model.linear_params - kept) * effective_weight_bits(bits, method) / 8 + kept * 2


def weight_bytes(model: ModelSpec, bits: float, method: str | None) -> float:
    """Bytes of all weights: the blocks (block_weight_bytes) plus embeddings and LM head in 16 bit."""
    return block_weight_bytes(model, bits, method) + model.embedding_params * 2


def kv_bytes_per_token(model: ModelSpec, kv_bytes: float, tp: int = 1, pp: int = 1, seq_len: int | None = None) -> float:
    """KV-cache bytes one token occupies on one GPU (GQA-aware; MLA latents are replicated under TP).

    `seq_len`: the sequence length, for an engine whose sliding-window layers keep only their window of each
    sequence (Line.window_kv): those layers then cost min(seq_len, window) / seq_len of a full layer per token.
    None: every layer keeps every token (an engine that treats sliding layers like full ones)."""
    layers = math.ceil(model.layers / pp)
    if model.uses_mla:
        return layers * (model.kv_lora_rank + model.qk_rope_head_dim) * kv_bytes
    heads_per_gpu = max(1, math.ceil(model.kv_heads / tp))
    stored = float(layers)
    if seq_len and model.sliding_layers and model.sliding_window < seq_len:
        sliding = layers * model.sliding_layers / model.layers  # pipeline stages split the layer pattern evenly
        stored = layers - sliding + sliding * model.sliding_window / seq_len
    return 2 * stored * heads_per_gpu * model.head_dim * kv_bytes


def activation_bytes(model: ModelSpec, batched_tokens: int, max_num_seqs: int, tp: int, acct: Line) -> float:
    """Peak memory of the engine's profiling pass: the forward activations of `batched_tokens` tokens (see
    the module docstring), the sampler pass over `max_num_seqs` rows of logits and, where the release holds them
    (tensor parallelism only), `acct.allreduce_held_share` of the 16-bit inputs of its all-reduces: one per
    decoder layer's attention output, one per MLP output and one for the vocabulary-parallel embedding, each
    `batched_tokens x hidden` (allreduce_inputs_bytes); 0 without a profiling pass."""
    if not acct.profile_pass:
        return 0.0
    intermediate = model.intermediate * max(1, model.experts_per_token)
    forward = batched_tokens * (12 * model.hidden + 6 * intermediate / tp) * acct.activation_scale
    logits = max_num_seqs * model.vocab * acct.sampler_bytes_per_logit / (tp if acct.logits_sharded else 1)
    held = acct.allreduce_held_share * allreduce_inputs_bytes(model, batched_tokens) if tp > 1 else 0.0
    return forward + logits + held


def allreduce_inputs_bytes(model: ModelSpec, batched_tokens: int) -> float:
    """All the tensor-parallel all-reduce inputs of one profiled forward pass, 16-bit: 2 per decoder layer
    (attention and MLP outputs) and 1 for the vocabulary-parallel embedding, each `batched_tokens x hidden`."""
    return float((2 * model.layers + 1) * batched_tokens * model.hidden * 2)


def outside_torch_bytes(tp: int, acct: Line) -> float:
    """Memory outside torch's allocator: the CUDA context and cuBLAS workspaces, and NCCL with tensor parallelism."""
    return (acct.non_torch_gib + (acct.multi_gpu_extra_gib if tp > 1 else 0.0)) * GIB


def overhead_bytes(tp: int, acct: Line) -> float:
    """Memory outside torch's allocator and the fitted remainder."""
    return outside_torch_bytes(tp, acct) + acct.constant_gib * GIB


@dataclass(frozen=True)
class MemoryPlan:
    """Outcome of sizing one configuration on one GPU of the group."""

    fits: bool
    reason: str | None
    budget_gib: float
    weights_gib: float
    activation_gib: float
    kv_cache_gib: float
    kv_bytes_per_token: float
    kv_tokens: int
    max_model_len: int
    max_num_seqs: int
    batched_tokens: int
    gpu_memory_utilization: float


def _round_len(tokens: int, block: int) -> int:
    """Context lengths people configure: a multiple of 1024 when large, of the block size otherwise."""
    step = 1024 if tokens >= 2048 else block
    return max(block, tokens // step * step)


def plan_memory(
    model: ModelSpec, gpu: Gpu, *, bits: float, method: str | None, kv_bytes: float, tp: int, pp: int,
    utilization: float, wanted_len: int, required_len: int, fixed_len: int | None, max_num_seqs: int,
    batched_tokens: int | None, acct: Line, fraction_of_free: bool = False, block_tokens: int = BLOCK_TOKENS,
) -> MemoryPlan:
    """Size one configuration; `batched_tokens=None` means no chunked prefill (the batch is a whole prompt).

    `acct`: the engine release's memory accounting (advisor.memory_accounting.line).
    `fraction_of_free`: the engine's memory fraction applies to what is free after the weights
    (TensorRT-LLM's kv_cache_free_gpu_memory_fraction) rather than to the whole GPU (vLLM, SGLang)."""
    weights = weight_bytes(model, bits, method) / (tp * pp)
    per_token = kv_bytes_per_token(model, kv_bytes, tp, pp, seq_len=required_len if acct.window_kv else None)
    target_len = fixed_len or wanted_len
    tokens_for_batch = batched_tokens or max(target_len, 2048)
    activations = activation_bytes(model, tokens_for_batch, max_num_seqs, tp, acct)
    fixed = weights + activations + overhead_bytes(tp, acct)
    usable = gpu.usable_gib * GIB
    share = utilization * acct.fraction_scale
    if fraction_of_free:
        budget = fixed + max(0.0, usable - fixed) * share
    elif acct.fraction_after_overhead:  # SGLang: the fraction is of what the CUDA context and NCCL left
        before = outside_torch_bytes(tp, acct)
        budget = before + (usable - before) * share
    else:
        budget = usable * share
    kv_room = (budget - fixed) * acct.kv_share_of_rest
    kv_tokens = max(0, int(kv_room // per_token) // block_tokens * block_tokens) if kv_room > 0 else 0

    def result(fits: bool, reason: str | None, length: int, seqs: int) -> MemoryPlan:
        return MemoryPlan(
            fits=fits, reason=reason, budget_gib=budget / GIB, weights_gib=weights / GIB,
            activation_gib=activations / GIB, kv_cache_gib=max(kv_room, 0) / GIB, kv_bytes_per_token=per_token,
            kv_tokens=kv_tokens, max_model_len=length, max_num_seqs=seqs, batched_tokens=tokens_for_batch,
            gpu_memory_utilization=utilization)

    if fixed > budget or fixed > usable:
        return result(False, (
            f"weights {weights / GIB:.2f} GiB + activations {activations / GIB:.2f} GiB per GPU exceed "
            f"{utilization:g} x {gpu.usable_gib:.2f} GiB on {gpu.name}"), 0, 0)
    if fixed_len and fixed_len > kv_tokens:
        return result(False, (
            f"max_model_len={fixed_len} needs {fixed_len * per_token / GIB:.2f} GiB of KV cache per GPU, "
            f"only {max(kv_room, 0) / GIB:.2f} GiB is left"), fixed_len, 0)
    length = fixed_len or min(wanted_len, _round_len(kv_tokens, block_tokens))
    if length < required_len:
        return result(False, (
            f"the KV cache holds {kv_tokens} tokens per sequence at most; the workload needs {required_len}"), length, 0)
    seqs = max(1, min(max_num_seqs, kv_tokens // max(1, required_len)))
    return result(True, None, length, seqs)

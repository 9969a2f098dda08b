"""Roofline step times for one engine iteration (a batch of prefill chunks and decode tokens).

Runs inside the simulator for every step of every candidate. Each iteration reads the weights once
(for MoE, only the experts the batch touches), reads the KV cache of every decoding sequence, and
does 2 FLOPs per active parameter per token plus attention; it takes the slower of memory and
compute time, then adds the tensor-parallel all-reduces (two per layer, ring algorithm) and a fixed
per-step launch/scheduling cost. The efficiency factors are modelling assumptions (fractions of
datasheet peaks that serving kernels typically reach); `python -m benchmarks.calibrate` measures how
well the whole model predicts our own engine on this machine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from advisor.catalog import Gpu
from advisor.model_specs import ModelSpec
from advisor.sizing import block_weight_bytes, effective_weight_bits, kv_bytes_per_token


class StepTimes(Protocol):
    """What the simulator needs of a step model: the roofline below, or measured per-op latencies
    (advisor.silicon)."""

    def step_seconds(self, prefill_tokens: int, prefill_context: float, decode_seqs: int, decode_context: float,
                     prefill_seqs: int = 0) -> float: ...


@dataclass(frozen=True)
class Efficiency:
    """Fractions of datasheet peaks reached in practice, plus fixed per-step costs (seconds)."""

    bandwidth: float = 0.80
    compute: float = 0.60
    step_overhead_s: float = 0.002
    per_seq_overhead_s: float = 0.00002
    allreduce_latency_s: float = 0.00002
    # each layer runs a fixed series of kernels (norms, QKV/O/FFN GEMMs, attention, all-reduce, and for
    # MoE the router, token permutation, grouped GEMMs and un-permutation), each with a floor that does
    # not shrink with the batch; aiconfigurator times a step the same way, as per-layer ops x num_layers
    # (aiconfigurator_core/sdk/models/llama.py, the ops built with `self._num_layers`)
    per_layer_overhead_s: float = 0.0
    # an MoE layer runs more of those kernels than a dense MLP: the router GEMM, top-k, the token
    # alignment/permutation, two grouped GEMMs with their activation and the weighted un-permutation
    # (vLLM's fused_moe: moe_align_block_size, two fused_moe_kernel launches, the activation and moe_sum,
    # vllm/model_executor/layers/fused_moe/fused_moe.py), each with a floor the batch does not shrink, so a
    # deep MoE model decodes slower than its bytes say; charged per layer of a model with experts (its few
    # dense first layers, as in DeepSeek-V3, are counted as MoE layers), less what a step's prompt tokens'
    # compute covers (StepModel.step_seconds)
    per_moe_layer_overhead_s: float = 0.0


def moe_floor_s(per_moe_layer_overhead_s: float, spec: ModelSpec) -> float:
    """The MoE kernels' latency floor of one step for `spec`: the per-layer floor times its layers, 0
    for a dense model. The roofline (StepModel) and the measured-step model (advisor.silicon) both charge it."""
    return per_moe_layer_overhead_s * spec.layers if spec.experts else 0.0


@dataclass(frozen=True)
class Hardware:
    """What one replica runs on: per-GPU peaks and the link between its GPUs."""

    bandwidth_bytes_s: float
    flops: float
    link_bytes_s: float
    tp: int
    pp: int

    @classmethod
    def from_gpu(cls, gpu: Gpu, precision: str, tp: int, pp: int) -> Hardware:
        # datasheet interconnect figures are bidirectional; a ring all-reduce uses one direction per link
        return cls(bandwidth_bytes_s=gpu.bandwidth_gbs * 1e9, flops=gpu.peak_tflops(precision) * 1e12,
                   link_bytes_s=gpu.interconnect_gbs * 1e9 / 2, tp=tp, pp=pp)


@dataclass(frozen=True)
class StepModel:
    """Time of one iteration as a function of what is in the batch."""

    model: ModelSpec
    hw: Hardware
    weight_bits: float
    quantization: str | None
    kv_bytes: float
    eff: Efficiency = Efficiency()

    def _weight_bytes_read(self, tokens: int) -> float:
        m, bits = self.model, effective_weight_bits(self.weight_bits, self.quantization)
        blocks = block_weight_bytes(m, self.weight_bits, self.quantization)
        if not m.experts:
            total = blocks
        else:
            expert = 3 * m.hidden * m.intermediate * bits / 8
            dense = blocks - m.layers * m.experts * expert
            touched = m.experts * (1 - (1 - m.experts_per_token / m.experts) ** max(tokens, 1))
            total = dense + m.layers * touched * expert
        lm_head = m.vocab * m.hidden * 2
        return (total + lm_head) / self.hw.tp

    def _allreduce_s(self, tokens: int) -> float:
        tp = self.hw.tp
        if tp == 1:
            return 0.0
        message = tokens * self.model.hidden * 2
        per_op = 2 * (tp - 1) / tp * message / self.hw.link_bytes_s + self.eff.allreduce_latency_s
        return 2 * self.model.layers * per_op

    def _decode_attention_width(self) -> int:
        """Per head, the width of a query-key product plus a value sum, for one decoding token and one
        cached token. MLA decodes with the up-projections absorbed into the query and output, so every head
        scores the whole latent plus its RoPE part and sums the latent (vLLM's MLA backend, the
        "data-movement friendly" decode path in vllm/v1/attention/backends/mla/common.py); other attention
        scores and sums `head_dim` wide."""
        m = self.model
        if m.uses_mla:
            return 2 * m.kv_lora_rank + m.qk_rope_head_dim
        return 2 * m.head_dim

    def step_seconds(self, prefill_tokens: int, prefill_context: float, decode_seqs: int, decode_context: float,
                     prefill_seqs: int = 0) -> float:
        """One iteration: `prefill_tokens` new prompt tokens (from `prefill_seqs` sequences) attending on
        average to `prefill_context` earlier tokens, plus `decode_seqs` sequences whose caches hold
        `decode_context` tokens in total. Per-sequence costs (metadata, sampling) apply to both kinds."""
        m, hw = self.model, self.hw
        tokens = prefill_tokens + decode_seqs
        if tokens == 0:
            return 0.0
        # each GPU reads its own share of the cache: KV heads are replicated when there are fewer than
        # GPUs, and an MLA latent is shared by all heads, so every GPU reads all of it; a sliding-window
        # layer reads at most its window of each sequence, whatever the engine keeps allocated
        mean_len = int(decode_context / decode_seqs) if decode_seqs else None
        kv_total = kv_bytes_per_token(m, self.kv_bytes, tp=hw.tp, seq_len=mean_len) * decode_context
        mem_s = (self._weight_bytes_read(tokens) + kv_total) / (hw.bandwidth_bytes_s * self.eff.bandwidth)
        attn_flops = (4 * m.layers * m.heads * m.head_dim * prefill_tokens * prefill_context
                      + 2 * m.layers * m.heads * self._decode_attention_width() * decode_context)
        flops = (2 * m.params_active * tokens + attn_flops) / hw.tp
        compute_s = flops / (hw.flops * self.eff.compute)
        overhead = (self.eff.step_overhead_s + self.eff.per_seq_overhead_s * (decode_seqs + prefill_seqs)
                    + self.eff.per_layer_overhead_s * m.layers)
        # the MoE kernels' floor is paid whole by a decode step (its short kernels are latency-bound, and
        # that is where --fit measures it, on TPOT) but hidden under a prefill chunk's GEMMs: kernel launches
        # are queued asynchronously, so their cost only shows when the kernels are shorter than them ("especially
        # when the CPU cannot keep up with feeding work to the GPU",
        # https://docs.nvidia.com/dl-cuda-graph/cuda-graph-basics/cuda-graph.html), and the fixed padding
        # moe_align_block_size adds per expert (up to block_size - 1 tokens each,
        # vllm/model_executor/layers/fused_moe/moe_align_block_size.py) vanishes beside thousands of prompt
        # tokens; so only the part of it the prompt tokens' compute does not cover is added
        moe_floor = moe_floor_s(self.eff.per_moe_layer_overhead_s, m)
        prefill_compute_s = 2 * m.params_active * prefill_tokens / hw.tp / (hw.flops * self.eff.compute)
        # pipeline stages run one after another for a given batch; each hands its activations on
        handoff = (hw.pp - 1) * (tokens * m.hidden * 2 / hw.link_bytes_s + self.eff.allreduce_latency_s)
        return (max(mem_s, compute_s) + max(0.0, moe_floor - prefill_compute_s) + self._allreduce_s(tokens)
                + handoff + overhead)

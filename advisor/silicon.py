"""Step times from measured per-op latencies: aiconfigurator-core's silicon database.

Runs inside the simulator in place of the roofline (advisor.perf) when aiconfigurator-core holds
per-op measurements for the GPU and engine: one iteration's time is its non-attention ops (GEMMs,
communication, MoE, norms) at the batch's token count, plus context attention for the prompt chunks,
plus generation attention for the decoding sequences, each looked up in the database's tables for
that system, backend and release (`EngineHandle.mixed_step_breakdown`). Lookups are memoised on a
~3 % grid of their arguments, so a simulation of thousands of steps costs a few hundred lookups.
Where the database has no data (other GPUs, llama.cpp, TGI, a model aiconfigurator cannot build),
building the model raises SiliconUnavailable and the caller (advisor.estimate) uses the roofline.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import tempfile
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from advisor.model_specs import ModelSpec
from advisor.versions import vkey

GRID = 1.03  # lookups are memoised on a geometric grid of this ratio (exact below 64)


@dataclass(frozen=True)
class SiliconTarget:
    """Which of aiconfigurator's measurements to use: system, backend and release, and the model's layout."""

    system: str
    backend: str
    version: str
    model_path: str
    tp: int = 1
    pp: int = 1
    gemm_quant: str | None = None
    moe_quant: str | None = None
    kv_quant: str | None = None
    fmha_quant: str | None = None
    moe_tp: int | None = None
    moe_ep: int | None = None
    attention_dp: int = 1


def _bucket(value: float) -> int:
    """`value` rounded onto the memoisation grid."""
    if value < 64:
        return max(0, round(value))
    return round(GRID ** round(math.log(value) / math.log(GRID)))


@cache
def version_slots(system: str, backend: str) -> list[str]:
    """Releases aiconfigurator can be queried at for this system and backend (empty when none)."""
    from aiconfigurator_core.sdk import perf_database

    try:
        slots = perf_database.get_version_slots(system, backend)
    except (ValueError, KeyError, OSError):
        return []
    return sorted({str(v) for v in (slots or {}).values() if v}, key=vkey)


def nearest_version(system: str, backend: str, wanted: str) -> str | None:
    """The queryable release closest to `wanted` (the newest when `wanted` cannot be ordered)."""
    slots = version_slots(system, backend)
    if not slots:
        return None
    key = vkey(wanted)
    if not key:  # "nightly", "" and the like
        return slots[-1]
    return min(reversed(slots), key=lambda v: _distance(vkey(v), key))  # ties go to the newer release


def _distance(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    width = max(len(a), len(b))
    pa, pb = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return tuple(abs(x - y) for x, y in zip(pa, pb, strict=True))


@cache
def _cached_configs() -> frozenset[str]:
    from aiconfigurator_core.sdk import common

    return frozenset(str(m) for m in common.DefaultHFModels)


@cache
def model_path_for(spec: ModelSpec) -> str | None:
    """The model as aiconfigurator can build it: its own cached config when it ships one for this
    checkpoint (or its base), else a config.json written from our spec for a dense decoder."""
    shipped = _cached_configs()
    for name in (spec.id, spec.base_id, spec.catalog_id):
        if name and name in shipped:
            return name
    if spec.experts or spec.uses_mla:
        return None  # our spec lacks what aiconfigurator needs to build MoE and MLA layers
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": spec.hidden,
              "num_hidden_layers": spec.layers, "num_attention_heads": spec.heads,
              "num_key_value_heads": spec.kv_heads, "head_dim": spec.head_dim,
              "intermediate_size": spec.intermediate, "vocab_size": spec.vocab,
              "max_position_embeddings": spec.max_context, "torch_dtype": "bfloat16",
              "tie_word_embeddings": spec.tied_embeddings}
    text = json.dumps(config, sort_keys=True)
    folder = Path(tempfile.gettempdir()) / "infrawiki-aic-models" / hashlib.sha256(text.encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(text, encoding="utf-8")
    return str(folder)


class SiliconUnavailable(RuntimeError):
    """aiconfigurator cannot build this configuration (no per-op data for it): use the roofline."""


@lru_cache(maxsize=256)
def _handle(target: SiliconTarget) -> Any:
    """aiconfigurator's compiled engine for `target`, or the reason it cannot be built (both kept, so a
    configuration it lacks data for is tried once per process)."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    logging.getLogger("aiconfigurator_core").setLevel(logging.ERROR)
    try:
        return EngineHandle.compile(
            target.model_path, target.system, target.backend, backend_version=target.version, tp_size=target.tp,
            pp_size=target.pp, gemm_quant_mode=target.gemm_quant, moe_quant_mode=target.moe_quant,
            kvcache_quant_mode=target.kv_quant, fmha_quant_mode=target.fmha_quant, moe_tp_size=target.moe_tp, moe_ep_size=target.moe_ep,
            attention_dp_size=target.attention_dp)
    except Exception as exc:  # noqa: BLE001 - it raises many kinds (missing data, unknown quant, bad layout)
        return SiliconUnavailable(f"{type(exc).__name__}: {str(exc)[:200]}")


@lru_cache(maxsize=256)
def unavailable(target: SiliconTarget) -> SiliconUnavailable | None:
    """Why aiconfigurator cannot time `target`, or None. Builds it and looks up every op kind a step
    uses once: the tables can lack a lane (KV dtype, head size) that building did not check."""
    handle = _handle(target)
    if isinstance(handle, SiliconUnavailable):
        return handle
    try:
        _prefill_ms(target, 64, 64)
        _decode_attention_ms(target, 8, 1024)
    except SiliconUnavailable as exc:
        return exc
    return None


def nearest_measured(target: SiliconTarget) -> tuple[SiliconTarget, str] | None:
    """`target`, else the closest configuration aiconfigurator has measurements for: attention kernels
    in bf16 (its tables often hold no fp8 attention for a GPU or MLA), then a bf16 KV cache too; with
    what was changed, in words (empty when nothing was). None when none of them can be timed."""
    attention = replace(target, fmha_quant="bfloat16")
    tries = [(target, ""), (attention, "attention timed with its bf16 kernels")]
    if target.kv_quant:
        tries.append((replace(attention, kv_quant=None), "attention and the fp8 KV cache timed with bf16 kernels"))
    return next(((t, why) for t, why in tries if unavailable(t) is None), None)


@lru_cache(maxsize=200_000)
def _prefill_ms(target: SiliconTarget, tokens: int, span: int) -> tuple[float, float]:
    """(non-attention ms for `tokens` tokens, context attention ms for chunks of prompts `span` long)."""
    try:
        _, shared, ctx_attn, _ = _handle(target).mixed_step_breakdown(max(tokens, 1), 0, max(span, 1), 0)
    except Exception as exc:  # noqa: BLE001 - a table without this point
        raise SiliconUnavailable(f"{type(exc).__name__}: {str(exc)[:200]}") from exc
    return float(shared), float(ctx_attn)


@lru_cache(maxsize=200_000)
def _decode_attention_ms(target: SiliconTarget, seqs: int, context: int) -> float:
    """Generation attention ms for `seqs` sequences holding `context` tokens each."""
    try:
        return float(_handle(target).mixed_step_breakdown(1, seqs, max(context, 1), 0)[3])
    except Exception as exc:  # noqa: BLE001 - a table without this point
        raise SiliconUnavailable(f"{type(exc).__name__}: {str(exc)[:200]}") from exc


class SiliconStepModel:
    """Iteration time from aiconfigurator's per-op tables (same call shape as advisor.perf.StepModel).

    `scale` (decode), `prefill_scale`, `step_overhead_s` and `per_seq_overhead_s` are the engine's fitted correction
    (advisor/catalog/calibration.json): the per-op tables time kernels, not the scheduler loop around them.
    `moe_floor_s` is the latency floor of a model's MoE kernels per step (the fitted per-MoE-layer cost
    times its layers; 0 for a dense model), charged as advisor.perf.StepModel charges it: whole to a
    decode step, hidden under a prefill chunk's compute. Raises SiliconUnavailable when aiconfigurator
    cannot build the configuration."""

    def __init__(self, target: SiliconTarget, scale: float = 1.0, step_overhead_s: float = 0.0,
                 per_seq_overhead_s: float = 0.0, prefill_scale: float = 1.0, moe_floor_s: float = 0.0) -> None:
        problem = unavailable(target)
        if problem is not None:
            raise problem
        self.target, self.scale, self.prefill_scale = target, scale, prefill_scale
        self.step_overhead_s, self.per_seq_overhead_s, self.moe_floor_s = step_overhead_s, per_seq_overhead_s, moe_floor_s

    def step_seconds(self, prefill_tokens: int, prefill_context: float, decode_seqs: int, decode_context: float,
                     prefill_seqs: int = 0) -> float:
        """One iteration; arguments as advisor.perf.StepModel.step_seconds."""
        tokens = prefill_tokens + decode_seqs
        if tokens == 0:
            return 0.0
        t = self.target
        # a chunk of n tokens attending to c earlier ones on average costs what aiconfigurator charges
        # for n tokens of prompts 2c long (its attention tables are per whole prompt, split per chunk)
        shared = _prefill_ms(t, _bucket(tokens), 1)[0]
        decode_shared = _prefill_ms(t, _bucket(decode_seqs), 1)[0] if decode_seqs else 0.0
        ctx_attn = _prefill_ms(t, _bucket(prefill_tokens), _bucket(2 * prefill_context))[1] if prefill_tokens else 0.0
        dec_attn = _decode_attention_ms(t, _bucket(decode_seqs), _bucket(decode_context / decode_seqs)) if decode_seqs else 0.0
        decode_ms = decode_shared + dec_attn
        prefill_ms = max(shared - decode_shared, 0.0) + ctx_attn
        seqs = decode_seqs + prefill_seqs
        prefill_s = prefill_ms * self.prefill_scale / 1e3
        return (decode_ms * self.scale / 1e3 + prefill_s + max(0.0, self.moe_floor_s - prefill_s)
                + self.step_overhead_s + self.per_seq_overhead_s * seqs)

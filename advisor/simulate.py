"""Discrete-event simulation of continuous batching on one replica, driven by the roofline step model.

Runs for the best candidate configurations of every recommendation, and in the calibration. Clients
keep `concurrency` requests in flight (as `vllm bench serve --max-concurrency` does): a new request
arrives when one finishes. Each iteration the scheduler, like vLLM's, gives every running sequence one
decode token and fills the rest of the token budget with prompt chunks (chunked prefill) — or, without
chunked prefill, runs waiting prompts whole before any decode. Sequences are admitted only while KV
blocks remain; when decoding runs out of blocks the newest sequence is preempted and recomputed
later. Stretches where the batch cannot change (no prompt work, no completion) are advanced in one
jump, so the cost grows with events, not tokens.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from advisor.perf import StepModel

BLOCK = 16
MAX_EVENTS = 100_000


@dataclass
class _Seq:
    arrival: float
    prompt: int
    output: int
    to_prefill: int = 0
    prefilled: int = 0
    generated: int = 0
    held: int = 0
    first_token_at: float | None = None

    @property
    def context(self) -> int:
        return self.prefilled + (self.generated if self.prefilled >= self.to_prefill else 0)

    @property
    def decoding(self) -> bool:
        return self.prefilled >= self.to_prefill


@dataclass(frozen=True)
class SimConfig:
    """Scheduler limits of the engine configuration being simulated."""

    kv_tokens: int
    max_num_seqs: int
    batched_tokens: int
    chunked_prefill: bool


@dataclass
class SimResult:
    ttft_s: list[float] = field(default_factory=list)
    tpot_s: list[float] = field(default_factory=list)
    e2e_s: list[float] = field(default_factory=list)
    output_tokens: int = 0
    makespan_s: float = 0.0
    preemptions: int = 0
    rejected: int = 0

    def summary(self) -> dict[str, float]:
        """p50/p95 TTFT, TPOT, end-to-end latency (ms) and output throughput (tokens/s)."""
        out = {f"{name}_{tag}_ms": percentile(values, q) * 1e3
               for name, values in (("ttft", self.ttft_s), ("tpot", self.tpot_s), ("e2e", self.e2e_s))
               for tag, q in (("p50", 50), ("p95", 95))}
        out["throughput_tok_s"] = self.output_tokens / self.makespan_s if self.makespan_s else 0.0
        out["preemptions"] = float(self.preemptions)
        return out


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default); 0 for no samples."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


class Simulator:
    """One replica serving a closed-loop workload; `run()` returns latency and throughput samples."""

    def __init__(self, step: StepModel, cfg: SimConfig, prompt: int, output: int, concurrency: int,
                 num_requests: int | None = None) -> None:
        self.step, self.cfg = step, cfg
        self.prompt, self.output, self.concurrency = prompt, output, concurrency
        self.num_requests = num_requests or max(3 * concurrency, 24)
        self.now = 0.0
        self.waiting: deque[_Seq] = deque()
        self.running: list[_Seq] = []
        self.sent = 0
        self.free = cfg.kv_tokens // BLOCK
        self.result = SimResult()

    # --- bookkeeping -------------------------------------------------------------------------
    def _arrive(self) -> None:
        if self.sent < self.num_requests:
            self.waiting.append(_Seq(self.now, self.prompt, self.output, to_prefill=self.prompt))
            self.sent += 1

    def _release(self, seq: _Seq) -> None:
        self.free += seq.held
        seq.held = 0

    def _complete(self, seq: _Seq) -> None:
        self.running.remove(seq)
        self._release(seq)
        r = self.result
        r.e2e_s.append(self.now - seq.arrival)
        r.ttft_s.append((seq.first_token_at or self.now) - seq.arrival)
        if seq.output > 1:
            r.tpot_s.append((self.now - (seq.first_token_at or seq.arrival)) / (seq.output - 1))
        r.output_tokens += seq.output
        self._arrive()

    def _preempt_newest(self) -> None:
        victim = self.running.pop()
        self._release(victim)
        victim.to_prefill = victim.prompt + victim.generated  # recompute the prompt and what it produced
        victim.prefilled = 0
        self.waiting.appendleft(victim)
        self.result.preemptions += 1

    # --- scheduling --------------------------------------------------------------------------
    def _prefill_chunks(self, decoders: int) -> list[tuple[_Seq, int]]:
        budget = self.cfg.batched_tokens - (decoders if self.cfg.chunked_prefill else 0)
        chunks: list[tuple[_Seq, int]] = []
        for seq in self.running:
            if not seq.decoding and budget > 0:
                take = min(budget, seq.to_prefill - seq.prefilled)
                chunks.append((seq, take))
                budget -= take
        while budget > 0 and self.waiting and len(self.running) < self.cfg.max_num_seqs:
            seq = self.waiting[0]
            need = math.ceil(seq.to_prefill / BLOCK)
            whole = self.cfg.chunked_prefill or seq.to_prefill <= budget or not chunks
            if need > self.free or not whole:
                break
            self.waiting.popleft()
            self.free -= need
            seq.held = need
            self.running.append(seq)
            take = min(budget, seq.to_prefill) if self.cfg.chunked_prefill else seq.to_prefill
            chunks.append((seq, take))
            budget -= take
        return chunks

    def _blocks_for(self, decoders: list[_Seq], steps: int) -> int:
        return sum(max(0, math.ceil((s.context + steps) / BLOCK) - s.held) for s in decoders)

    def _grow(self, decoders: list[_Seq], steps: int) -> None:
        for s in decoders:
            extra = max(0, math.ceil((s.context + steps) / BLOCK) - s.held)
            s.held += extra
            self.free -= extra

    def _step(self, chunks: list[tuple[_Seq, int]], decoders: list[_Seq]) -> None:
        tokens = sum(t for _, t in chunks)
        prefill_ctx = sum((s.prefilled + t / 2) * t for s, t in chunks) / max(tokens, 1)
        self.now += self.step.step_seconds(tokens, prefill_ctx, len(decoders), sum(s.context for s in decoders))
        self._grow(decoders, 1)
        for seq in decoders:
            seq.generated += 1
        for seq, take in chunks:
            seq.prefilled += take
            if seq.decoding and seq.first_token_at is None:
                seq.first_token_at = self.now
                seq.generated = max(seq.generated, 1)
        for seq in [s for s in self.running if s.decoding and s.generated >= s.output]:
            self._complete(seq)

    def _decode_jump(self, decoders: list[_Seq]) -> None:
        steps = min(s.output - s.generated for s in decoders)
        while steps > 1 and self._blocks_for(decoders, steps) > self.free:
            steps //= 2
        if self._blocks_for(decoders, steps) > self.free:
            self._preempt_newest()
            return
        mid_context = sum(s.context for s in decoders) + len(decoders) * (steps - 1) / 2
        self.now += steps * self.step.step_seconds(0, 0.0, len(decoders), mid_context)
        self._grow(decoders, steps)
        for seq in decoders:
            seq.generated += steps
        for seq in [s for s in decoders if s.generated >= s.output]:
            self._complete(seq)

    def run(self) -> SimResult:
        for _ in range(self.concurrency):
            self._arrive()
        for _ in range(MAX_EVENTS):
            if not (self.running or self.waiting):
                break
            decoders = [s for s in self.running if s.decoding]
            chunks = self._prefill_chunks(len(decoders))
            if chunks and not self.cfg.chunked_prefill:
                decoders = []  # prefill-first scheduling: this iteration runs prompts only
            if chunks:
                self._step(chunks, decoders)
            elif decoders:
                self._decode_jump(decoders)
            elif self.running:
                self._preempt_newest()
            else:  # the head request can never fit the cache: count it as rejected
                self.waiting.popleft()
                self.result.rejected += 1
                self._arrive()
        self.result.makespan_s = self.now
        return self.result

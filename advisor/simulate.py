"""Discrete-event simulation of continuous batching on one replica, driven by the roofline step model.

Runs for the shortlisted configurations of every recommendation, and in the calibration. Clients
keep `concurrency` requests in flight (as `vllm bench serve --max-concurrency` does): a new request
arrives when one finishes. Each iteration the scheduler, like vLLM's, gives every running sequence one
decode token and fills the rest of the token budget with prompt chunks (chunked prefill) — or, without
chunked prefill, runs waiting prompts whole before any decode. A sequence is admitted only while the
KV cache has room for its prompt; when decoding runs out of room the newest sequence is preempted
and recomputed later (vLLM's recompute preemption).

Decoding sequences are kept in aggregate (count, total context, a heap of finish times), and
stretches where the batch cannot change are advanced in one jump, so a call costs O(events log n)
rather than O(tokens x batch) — fast enough to simulate every shortlisted configuration per request.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field

from advisor.perf import StepModel

BLOCK = 16
MAX_EVENTS = 200_000


@dataclass(eq=False)
class _Seq:
    arrival: float
    prompt: int
    output: int
    to_prefill: int
    prefilled: int = 0
    generated: int = 0  # tokens produced before the current decode stretch
    start_step: int = 0  # decode-iteration counter when this stretch began
    held: int = 0  # KV tokens reserved at admission (prompt rounded to blocks)
    first_token_at: float | None = None
    epoch: int = 0  # bumped whenever the sequence leaves the decode set; stale heap entries are skipped


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


def _blocks(tokens: int) -> int:
    return math.ceil(tokens / BLOCK) * BLOCK


class Simulator:
    """One replica serving a closed-loop workload; `run()` returns latency and throughput samples."""

    def __init__(self, step: StepModel, cfg: SimConfig, prompt: int, output: int, concurrency: int,
                 num_requests: int | None = None) -> None:
        self.step, self.cfg = step, cfg
        self.prompt, self.output, self.concurrency = prompt, output, concurrency
        self.num_requests = num_requests or max(2 * concurrency, 24)
        self.now = 0.0
        self.sent = 0
        self.waiting: deque[_Seq] = deque()
        self.prefilling: list[_Seq] = []
        self.decoding: dict[int, _Seq] = {}  # insertion order = admission order, for newest-first preemption
        self.finish_heap: list[tuple[int, int, int, _Seq]] = []
        self.uid = 0
        self.steps = 0  # decode iterations so far
        self.decode_ctx = 0  # total context of decoding sequences
        self.used = 0  # KV tokens in use
        self.result = SimResult()

    # --- bookkeeping -------------------------------------------------------------------------
    def _arrive(self) -> None:
        if self.sent < self.num_requests:
            self.waiting.append(_Seq(self.now, self.prompt, self.output, to_prefill=self.prompt))
            self.sent += 1

    def _running(self) -> int:
        return len(self.prefilling) + len(self.decoding)

    def _context(self, seq: _Seq) -> int:
        return seq.to_prefill + (self.steps - seq.start_step)

    def _start_decoding(self, seq: _Seq) -> None:
        seq.start_step = self.steps
        self.decoding[id(seq)] = seq
        self.decode_ctx += seq.to_prefill
        remaining = seq.output - seq.generated
        self.uid += 1
        heapq.heappush(self.finish_heap, (self.steps + remaining, self.uid, seq.epoch, seq))

    def _stop_decoding(self, seq: _Seq) -> int:
        """Remove from the decode set; returns the KV tokens it held."""
        del self.decoding[id(seq)]
        context = self._context(seq)
        self.decode_ctx -= context
        seq.epoch += 1
        return seq.held + 1 + (context - seq.to_prefill)

    def _stale(self, entry: tuple[int, int, int, _Seq]) -> bool:
        return entry[2] != entry[3].epoch or id(entry[3]) not in self.decoding

    def _complete_due(self) -> None:
        while self.finish_heap and self.finish_heap[0][0] <= self.steps:
            entry = heapq.heappop(self.finish_heap)
            if self._stale(entry):
                continue
            seq = entry[3]
            self.used -= self._stop_decoding(seq)
            r = self.result
            r.e2e_s.append(self.now - seq.arrival)
            r.ttft_s.append((seq.first_token_at or self.now) - seq.arrival)
            if seq.output > 1:
                r.tpot_s.append((self.now - (seq.first_token_at or seq.arrival)) / (seq.output - 1))
            r.output_tokens += seq.output
            self._arrive()

    def _preempt_newest(self) -> None:
        if self.decoding:
            victim = self.decoding[next(reversed(self.decoding))]
            self.used -= self._stop_decoding(victim)
            victim.generated += self.steps - victim.start_step
        else:
            victim = self.prefilling.pop()
            self.used -= victim.held
            victim.epoch += 1
        victim.to_prefill = victim.prompt + victim.generated  # recompute the prompt and what it produced
        victim.prefilled, victim.held = 0, 0
        self.waiting.appendleft(victim)
        self.result.preemptions += 1

    # --- scheduling --------------------------------------------------------------------------
    def _prefill_chunks(self) -> list[tuple[_Seq, int]]:
        budget = self.cfg.batched_tokens - (len(self.decoding) if self.cfg.chunked_prefill else 0)
        chunks: list[tuple[_Seq, int]] = []
        for seq in self.prefilling:
            if budget <= 0:
                break
            take = min(budget, seq.to_prefill - seq.prefilled)
            chunks.append((seq, take))
            budget -= take
        while budget > 0 and self.waiting and self._running() < self.cfg.max_num_seqs:
            seq = self.waiting[0]
            need = _blocks(seq.to_prefill)
            whole = self.cfg.chunked_prefill or seq.to_prefill <= budget or not chunks
            if self.used + need > self.cfg.kv_tokens or not whole:
                break
            self.waiting.popleft()
            self.used += need
            seq.held = need
            self.prefilling.append(seq)
            take = min(budget, seq.to_prefill) if self.cfg.chunked_prefill else seq.to_prefill
            chunks.append((seq, take))
            budget -= take
        return chunks

    def _mixed_step(self, chunks: list[tuple[_Seq, int]], with_decode: bool) -> None:
        tokens = sum(t for _, t in chunks)
        prefill_ctx = sum((s.prefilled + t / 2) * t for s, t in chunks) / max(tokens, 1)
        decoders = len(self.decoding) if with_decode else 0
        self.now += self.step.step_seconds(tokens, prefill_ctx, decoders, self.decode_ctx if with_decode else 0,
                                           prefill_seqs=len(chunks))
        if with_decode:
            self.steps += 1
            self.decode_ctx += decoders
            self.used += decoders
        for seq, take in chunks:
            seq.prefilled += take
        done = [s for s, _ in chunks if s.prefilled >= s.to_prefill]
        for seq in done:
            self.prefilling.remove(seq)
            if seq.first_token_at is None:
                seq.first_token_at = self.now
                seq.generated = max(seq.generated, 1)
            self.used += 1
            if seq.generated >= seq.output:
                self.used -= seq.held + 1
                self._finish_without_decode(seq)
            else:
                self._start_decoding(seq)
        if with_decode:
            self._complete_due()

    def _finish_without_decode(self, seq: _Seq) -> None:
        r = self.result
        r.e2e_s.append(self.now - seq.arrival)
        r.ttft_s.append((seq.first_token_at or self.now) - seq.arrival)
        r.output_tokens += seq.output
        self._arrive()

    def _decode_jump(self) -> None:
        count = len(self.decoding)
        while self.finish_heap and self._stale(self.finish_heap[0]):
            heapq.heappop(self.finish_heap)
        steps = self.finish_heap[0][0] - self.steps if self.finish_heap else 1
        room = (self.cfg.kv_tokens - self.used) // count
        steps = max(0, min(steps, room))
        if steps < 1:
            self._preempt_newest()
            return
        mid_context = self.decode_ctx + count * (steps - 1) / 2
        self.now += steps * self.step.step_seconds(0, 0.0, count, mid_context)
        self.steps += steps
        self.decode_ctx += count * steps
        self.used += count * steps
        self._complete_due()

    def run(self) -> SimResult:
        for _ in range(self.concurrency):
            self._arrive()
        for _ in range(MAX_EVENTS):
            if not (self.waiting or self.prefilling or self.decoding):
                break
            chunks = self._prefill_chunks()
            if chunks:
                self._mixed_step(chunks, with_decode=self.cfg.chunked_prefill or not self.decoding)
            elif self.decoding:
                self._decode_jump()
            elif self.prefilling:
                self._preempt_newest()
            else:  # the head request can never fit the cache: count it as rejected
                self.waiting.popleft()
                self.result.rejected += 1
                self._arrive()
        self.result.makespan_s = self.now
        return self.result

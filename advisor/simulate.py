"""Discrete-event simulation of continuous batching on one replica, driven by a per-step time model.

Runs for the shortlisted configurations of every recommendation, and in the calibration benchmarks. Two
arrival models: a closed loop, where clients keep `concurrency` requests in flight (as `vllm bench serve
--max-concurrency` does) and each sends its next request `think_time_s` after the last one finishes; or
an open loop, where requests arrive as a Poisson process at `request_rate` per second (seeded, so
answers are repeatable) whatever the server's progress. Real closed-loop clients drift apart within a
few requests. By default a wave that starts together is spread only by the engine's own admission
order (a chunked-prefill budget admits a few prompts per step, and each group keeps its place); with
`stagger` (what advisor.estimate and the perf-accuracy bench use) the clients start at random (seeded)
phases over one request's expected duration, as independent users do. Either way the percentiles come
from the steady state: the first wave (one request per client) is served but left out of `summary()`
and `goodput()` (`summary(include_warm_up=True)` counts it, as a benchmark client that reports every
request it sent does). With `min_length_ratio` below 1, each request's prompt and output lengths are
drawn (seeded) uniformly between that fraction of the given lengths and the lengths themselves, as
`benchmark_serving.py --dataset-name random --random-range-ratio` draws them; unequal requests finish
at different times, which is what spreads a closed loop's clients apart in real runs. Every request also pays `request_overhead_s` before it can be scheduled (the engine
frontend's tokenisation, scheduling and detokenisation; fitted per engine in
advisor/catalog/calibration.json), which counts in its TTFT. With prefix caching, every request after
the first that computed a shared prefix of `prefix_tokens` skips prefilling it, and the prefix's KV
blocks are held once. Each iteration the scheduler, like vLLM's, gives every running sequence one
decode token and fills the rest of the token budget with prompt chunks (chunked prefill) — or, without
chunked prefill, runs waiting prompts whole, before any decode or (`mixed_steps`) in the same step. A sequence is admitted only while the
KV cache has room for its prompt; when decoding runs out of room the newest sequence is preempted
and recomputed later (vLLM's recompute preemption).

Decoding sequences are kept in aggregate (count, total context, a heap of finish times), and
stretches where the batch cannot change are advanced in one jump, so a call costs O(events log n)
rather than O(tokens x batch) — fast enough to simulate every shortlisted configuration per request.
"""
from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass, field

from advisor.perf import StepTimes

BLOCK = 16
MAX_EVENTS = 200_000


@dataclass(eq=False)
class _Seq:
    arrival: float
    prompt: int
    output: int
    to_prefill: int
    cached: int = 0  # prompt tokens served from the prefix cache (never prefilled, KV shared)
    prefilled: int = 0
    generated: int = 0  # tokens produced before the current decode stretch
    start_step: int = 0  # decode-iteration counter when this stretch began
    held: int = 0  # KV tokens reserved at admission (prompt rounded to blocks)
    first_token_at: float | None = None
    steady: bool = True  # False for a closed loop's first wave, left out of the percentiles
    epoch: int = 0  # bumped whenever the sequence leaves the decode set; stale heap entries are skipped


@dataclass(frozen=True)
class SimConfig:
    """Scheduler limits of the engine configuration being simulated."""

    kv_tokens: int
    max_num_seqs: int
    batched_tokens: int
    chunked_prefill: bool
    # whether a step that runs prompts also advances the decoding sequences (None: as chunked_prefill);
    # engines that batch whole prompts with the generation phase say True with chunked_prefill False
    mixed_steps: bool | None = None

    @property
    def mixes(self) -> bool:
        """Prompts and decode tokens share a step (chunked prefill, or in-flight batching of whole prompts)."""
        return self.chunked_prefill if self.mixed_steps is None else self.mixed_steps


@dataclass(frozen=True)
class Served:
    """One finished request: its latencies (seconds; `tpot_s` None for a one-token answer) and output."""

    ttft_s: float
    tpot_s: float | None
    e2e_s: float
    output: int
    steady: bool = True


@dataclass
class SimResult:
    ttft_s: list[float] = field(default_factory=list)
    tpot_s: list[float] = field(default_factory=list)
    e2e_s: list[float] = field(default_factory=list)
    served: list[Served] = field(default_factory=list)
    output_tokens: int = 0
    makespan_s: float = 0.0
    preemptions: int = 0
    rejected: int = 0
    prefix_hits: int = 0

    def record(self, served: Served) -> None:
        self.served.append(served)
        self.ttft_s.append(served.ttft_s)
        self.e2e_s.append(served.e2e_s)
        if served.tpot_s is not None:
            self.tpot_s.append(served.tpot_s)
        self.output_tokens += served.output

    def steady(self) -> list[Served]:
        """The requests served in the steady state (every request when no warm-up was marked)."""
        return [r for r in self.served if r.steady] or self.served

    def goodput(self, ttft_s: float | None, tpot_s: float | None, e2e_s: float | None) -> tuple[float, float]:
        """(fraction of steady-state requests meeting every given latency limit, the output tokens per
        second that fraction of the throughput amounts to)."""
        def ok(r: Served) -> bool:
            return ((ttft_s is None or r.ttft_s <= ttft_s) and (e2e_s is None or r.e2e_s <= e2e_s)
                    and (tpot_s is None or r.tpot_s is None or r.tpot_s <= tpot_s))
        steady = self.steady()
        good = sum(r.output for r in steady if ok(r))
        total = sum(r.output for r in steady)
        fraction = sum(ok(r) for r in steady) / len(steady) if steady else 0.0
        rate = self.output_tokens / self.makespan_s if self.makespan_s else 0.0
        return fraction, (rate * good / total if total else 0.0)

    def summary(self, include_warm_up: bool = False) -> dict[str, float]:
        """Steady-state p50/p95 and mean TTFT, TPOT, end-to-end latency (ms) and output throughput
        (tokens/s); with `include_warm_up`, the latencies of every request served, first wave included."""
        steady = self.served if include_warm_up else self.steady()
        series = (("ttft", [r.ttft_s for r in steady]), ("e2e", [r.e2e_s for r in steady]),
                  ("tpot", [r.tpot_s for r in steady if r.tpot_s is not None]))
        out = {f"{name}_{tag}_ms": percentile(values, q) * 1e3
               for name, values in series for tag, q in (("p50", 50), ("p95", 95))}
        out.update({f"{name}_mean_ms": sum(values) / len(values) * 1e3 if values else 0.0 for name, values in series})
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


OPEN_LOOP_SECONDS = 60  # an open-loop run sends about a minute of arrivals ...
OPEN_LOOP_REQUESTS = (24, 400)  # ... within these bounds, so one simulation stays cheap


class Simulator:
    """One replica serving a closed- or open-loop workload; `run()` returns latency and throughput samples."""

    def __init__(self, step: StepTimes, cfg: SimConfig, prompt: int, output: int, concurrency: int,
                 num_requests: int | None = None, *, request_rate: float | None = None, prefix_tokens: int = 0,
                 seed: int = 0, think_time_s: float = 0.0, request_overhead_s: float = 0.0,
                 stagger: bool = False, min_length_ratio: float = 1.0) -> None:
        self.step, self.cfg = step, cfg
        self.prompt, self.output, self.concurrency = prompt, output, concurrency
        self.request_rate = request_rate
        self.prefix_tokens = min(prefix_tokens, prompt - 1) if prefix_tokens > 0 else 0
        self.prefix_ready = False
        if num_requests is None and request_rate:
            low, high = OPEN_LOOP_REQUESTS
            num_requests = int(min(high, max(low, request_rate * OPEN_LOOP_SECONDS)))
        self.num_requests = num_requests or max(2 * concurrency, 24)
        self.think_time_s, self.request_overhead_s, self.stagger = think_time_s, request_overhead_s, stagger
        self.seed = seed
        self.min_length_ratio = min_length_ratio
        self.lengths = random.Random(seed + 1)  # its own stream, so arrivals stay as they were
        self.arrivals: list[float] = []  # heap of send times still to come
        if request_rate:
            rng, at = random.Random(seed), 0.0
            for _ in range(self.num_requests):
                at += rng.expovariate(request_rate)
                self.arrivals.append(at)
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
    def _arrive(self, sent_at: float) -> None:
        """A request sent at `sent_at` reaches the scheduler's queue (its frontend cost already paid)."""
        if self.sent < self.num_requests:
            prompt, output = self._draw_length(self.prompt), self._draw_length(self.output)
            cached = min(self.prefix_tokens, prompt - 1) if self.prefix_ready else 0
            warm_up = self.request_rate is None and self.sent < self.concurrency
            self.waiting.append(_Seq(sent_at, prompt, output, to_prefill=prompt - cached,
                                     cached=cached, steady=not warm_up))
            self.sent += 1
            self.result.prefix_hits += bool(cached)

    def _draw_length(self, length: int) -> int:
        """One request's length: `length` itself, or uniform in [min_length_ratio x length, length]."""
        if self.min_length_ratio >= 1.0:
            return length
        return self.lengths.randint(max(1, int(length * self.min_length_ratio)), length)

    def _ready(self) -> float | None:
        """When the next request still to come reaches the scheduler, if any is left."""
        return self.arrivals[0] + self.request_overhead_s if self.arrivals else None

    def _closed_loop_next(self) -> None:
        """A finished request frees its client, who sends the next one after thinking (closed loop only)."""
        if self.request_rate is None and self.sent + len(self.arrivals) < self.num_requests:
            heapq.heappush(self.arrivals, self.now + self.think_time_s)

    def _admit_arrivals(self) -> None:
        """Every request whose frontend work is done by now joins the queue."""
        while self.arrivals and self.arrivals[0] + self.request_overhead_s <= self.now:
            self._arrive(heapq.heappop(self.arrivals))

    def _stagger(self) -> float:
        """Seconds over which the closed loop's clients start: one request's expected duration at the
        steady batch (its prefill, then its decode steps), so the clients arrive already out of step."""
        batch = max(1, min(self.concurrency, self.cfg.max_num_seqs))
        context = batch * (self.prompt + self.output / 2)
        prefill = self.step.step_seconds(self.prompt, self.prompt / 2, 0, 0.0, prefill_seqs=1)
        decode = self.step.step_seconds(0, 0.0, batch, context)
        return prefill + max(self.output - 1, 0) * decode + self.think_time_s

    def _prefix_computed(self) -> None:
        """The first full prefill leaves the shared prefix in the cache: hold its blocks once from now on."""
        if self.prefix_tokens and not self.prefix_ready:
            self.prefix_ready = True
            self.used += _blocks(self.prefix_tokens)

    def _running(self) -> int:
        return len(self.prefilling) + len(self.decoding)

    def _context(self, seq: _Seq) -> int:
        return seq.cached + seq.to_prefill + (self.steps - seq.start_step)

    def _start_decoding(self, seq: _Seq) -> None:
        seq.start_step = self.steps
        self.decoding[id(seq)] = seq
        self.decode_ctx += seq.cached + seq.to_prefill
        remaining = seq.output - seq.generated
        self.uid += 1
        heapq.heappush(self.finish_heap, (self.steps + remaining, self.uid, seq.epoch, seq))

    def _stop_decoding(self, seq: _Seq) -> int:
        """Remove from the decode set; returns the KV tokens it held."""
        del self.decoding[id(seq)]
        context = self._context(seq)
        self.decode_ctx -= context
        seq.epoch += 1
        return seq.held + 1 + (context - seq.cached - seq.to_prefill)

    def _stale(self, entry: tuple[int, int, int, _Seq]) -> bool:
        return entry[2] != entry[3].epoch or id(entry[3]) not in self.decoding

    def _complete_due(self) -> None:
        while self.finish_heap and self.finish_heap[0][0] <= self.steps:
            entry = heapq.heappop(self.finish_heap)
            if self._stale(entry):
                continue
            seq = entry[3]
            self.used -= self._stop_decoding(seq)
            first = seq.first_token_at or self.now
            tpot = (self.now - first) / (seq.output - 1) if seq.output > 1 else None
            self.result.record(Served(first - seq.arrival, tpot, self.now - seq.arrival, seq.output, seq.steady))
            self._closed_loop_next()

    def _preempt_newest(self) -> None:
        if self.decoding:
            victim = self.decoding[next(reversed(self.decoding))]
            self.used -= self._stop_decoding(victim)
            victim.generated += self.steps - victim.start_step
        else:
            victim = self.prefilling.pop()
            self.used -= victim.held
            victim.epoch += 1
        victim.to_prefill = victim.prompt + victim.generated - victim.cached  # recompute what it produced
        victim.prefilled, victim.held = 0, 0
        self.waiting.appendleft(victim)
        self.result.preemptions += 1

    # --- scheduling --------------------------------------------------------------------------
    def _prefill_chunks(self) -> list[tuple[_Seq, int]]:
        budget = self.cfg.batched_tokens - (len(self.decoding) if self.cfg.mixes else 0)
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
        prefill_ctx = sum((s.cached + s.prefilled + t / 2) * t for s, t in chunks) / max(tokens, 1)
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
            self._prefix_computed()
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
        first = seq.first_token_at or self.now
        self.result.record(Served(first - seq.arrival, None, self.now - seq.arrival, seq.output, seq.steady))
        self._closed_loop_next()

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
        per_step = self.step.step_seconds(0, 0.0, count, mid_context)
        ready = self._ready()
        if ready is not None and per_step > 0:  # stop the jump at the next arrival so it is scheduled on time
            steps = max(1, min(steps, math.ceil((ready - self.now) / per_step)))
        self.now += steps * per_step
        self.steps += steps
        self.decode_ctx += count * steps
        self.used += count * steps
        self._complete_due()

    def run(self) -> SimResult:
        if self.request_rate is None:
            span, rng = (self._stagger() if self.stagger else 0.0), random.Random(self.seed)
            self.arrivals = [rng.uniform(0, span) for _ in range(min(self.concurrency, self.num_requests))]
        heapq.heapify(self.arrivals)
        for _ in range(MAX_EVENTS):
            self._admit_arrivals()
            if not (self.waiting or self.prefilling or self.decoding):
                ready = self._ready()
                if ready is None:
                    break
                self.now = max(self.now, ready)  # idle until the next request reaches the scheduler
                continue
            chunks = self._prefill_chunks()
            if chunks:
                self._mixed_step(chunks, with_decode=self.cfg.mixes or not self.decoding)
            elif self.decoding:
                self._decode_jump()
            elif self.prefilling:
                self._preempt_newest()
            else:  # the head request can never fit the cache: count it as rejected
                self.waiting.popleft()
                self.result.rejected += 1
                self._closed_loop_next()
        self.result.makespan_s = self.now
        return self.result

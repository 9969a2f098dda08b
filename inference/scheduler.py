"""Iteration-level scheduler: decides, before every forward pass, which sequences run and how many tokens each.

Policy (like vLLM v1): running sequences first, in arrival order, each asking for all its uncomputed
tokens (1 for a decoding sequence, a chunk of the prompt for a prefilling one), bounded by a
per-step token budget (`max_num_batched_tokens`) — that bound is what makes prefill "chunked". Then
waiting sequences are admitted first-come-first-served while the budget, `max_num_seqs` and the free
blocks allow. When a running sequence needs a block and none is free, the most recently admitted
running sequence is preempted: its blocks are freed and it goes back to the front of the queue to be
recomputed later (its full blocks usually come straight back from the prefix cache). Because a single
sequence always fits in the whole cache (checked in Config), some sequence always makes progress.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from inference.block_manager import BlockManager
from inference.sequence import Sequence, SequenceStatus


@dataclass
class SchedulerOutput:
    """Sequences to run this step and, aligned with them, how many new tokens each computes."""

    seqs: list[Sequence] = field(default_factory=list)
    num_tokens: list[int] = field(default_factory=list)
    preempted: list[Sequence] = field(default_factory=list)

    def samples(self, i: int) -> bool:
        """Whether sequence i reaches its last token this step, so its logits are sampled."""
        seq = self.seqs[i]
        return seq.num_computed_tokens + self.num_tokens[i] == seq.num_tokens


class Scheduler:
    def __init__(self, block_manager: BlockManager, max_num_seqs: int, max_num_batched_tokens: int) -> None:
        self.block_manager = block_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0

    def add(self, seq: Sequence) -> None:
        max_tokens = self.block_manager.num_blocks * self.block_manager.block_size
        if seq.num_tokens >= max_tokens:
            raise ValueError(f"prompt of {seq.num_tokens} tokens does not fit the KV cache ({max_tokens} slots)")
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def abort(self, seq_id: int) -> Sequence | None:
        """Drop a sequence wherever it is and free its blocks; returns it, or None if unknown."""
        for queue in (self.waiting, self.running):
            for seq in queue:
                if seq.seq_id == seq_id:
                    queue.remove(seq)
                    self.finish(seq, "abort")
                    return seq
        return None

    def finish(self, seq: Sequence, reason: str) -> None:
        self.block_manager.free_seq(seq)
        seq.status = SequenceStatus.FINISHED
        seq.finish_reason = reason

    def _preempt(self, seq: Sequence) -> None:
        self.block_manager.free_seq(seq)
        seq.status = SequenceStatus.WAITING
        seq.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(seq)

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        budget = self.max_num_batched_tokens
        bm = self.block_manager
        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            n = min(seq.num_tokens - seq.num_computed_tokens, budget)
            while not bm.can_append_slots(seq, n):
                victim = self.running.pop()
                self._preempt(victim)
                out.preempted.append(victim)
                if victim is seq:
                    break
            if seq.status is not SequenceStatus.RUNNING:
                break
            bm.append_slots(seq, n)
            out.seqs.append(seq)
            out.num_tokens.append(n)
            budget -= n
            i += 1
        # Admit only when nothing was preempted: admitting now would just evict the same blocks again.
        while self.waiting and budget > 0 and len(self.running) < self.max_num_seqs and not out.preempted:
            seq = self.waiting[0]
            n = min(seq.num_tokens - bm.num_cached_tokens(seq), budget)
            if not bm.can_allocate(seq, n):
                break
            self.waiting.popleft()
            bm.allocate(seq)
            n = min(seq.num_tokens - seq.num_computed_tokens, budget)
            bm.append_slots(seq, n)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.seqs.append(seq)
            out.num_tokens.append(n)
            budget -= n
        return out

    def postprocess(self, out: SchedulerOutput) -> None:
        """Advance progress counters after the forward pass and publish newly full blocks to the cache."""
        for seq, n in zip(out.seqs, out.num_tokens, strict=True):
            seq.num_computed_tokens += n
            self.block_manager.cache_full_blocks(seq)

    def remove_finished(self) -> None:
        self.running = [s for s in self.running if not s.is_finished]

"""Paged KV-cache bookkeeping: which physical blocks each sequence owns; called by the scheduler every step.

The cache is `num_blocks` fixed-size blocks of `block_size` token slots. Free blocks sit in an LRU
ordered dict; a freed block that holds a full, hashed prefix stays findable there until it is
evicted, so a later request (or a preempted one coming back) with the same prefix reuses it. A block's
hash chains its parent's hash with its own token ids, so equal hashes mean equal whole prefixes; the
token ids are kept on the block and compared on a hit so a hash collision can never serve wrong K/V.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from inference.sequence import Sequence


@dataclass
class Block:
    block_id: int
    ref_count: int = 0
    hash: int | None = None
    token_ids: tuple[int, ...] = ()


def chain_hash(parent: int | None, token_ids: tuple[int, ...]) -> int:
    return hash((parent, token_ids))


class BlockManager:
    """Allocates blocks to sequences; paired `can_*` / do methods so the scheduler checks before it commits."""

    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True) -> None:
        assert num_blocks > 0 and block_size > 0
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self.hash_to_block: dict[int, int] = {}
        self.prefix_hits = 0  # tokens served from the cache, for metrics and tests
        self.prefix_queries = 0

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def num_free_blocks(self) -> int:
        return len(self.free)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self.free)

    # -- prefix cache -------------------------------------------------------------------------------
    def _cached_prefix(self, seq: Sequence) -> list[int]:
        """Block ids that already hold this sequence's leading full blocks.

        At most (num_tokens - 1) // block_size blocks: the last token is always computed so the step
        produces logits, and a shared block is never written to.
        """
        if not self.enable_prefix_caching:
            return []
        hits: list[int] = []
        parent: int | None = None
        for i in range((seq.num_tokens - 1) // self.block_size):
            tokens = seq.block_tokens(i)
            parent = chain_hash(parent, tokens)
            block_id = self.hash_to_block.get(parent)
            if block_id is None or self.blocks[block_id].token_ids != tokens:
                break
            hits.append(block_id)
        return hits

    def num_cached_tokens(self, seq: Sequence) -> int:
        """How many leading tokens of `seq` the prefix cache would serve right now."""
        return len(self._cached_prefix(seq)) * self.block_size

    def _take_free_block(self) -> int:
        block_id, _ = self.free.popitem(last=False)  # least recently freed first
        block = self.blocks[block_id]
        assert block.ref_count == 0
        if block.hash is not None and self.hash_to_block.get(block.hash) == block_id:
            del self.hash_to_block[block.hash]
        block.hash, block.token_ids, block.ref_count = None, (), 1
        return block_id

    # -- admission -----------------------------------------------------------------------------------
    def can_allocate(self, seq: Sequence, num_new_tokens: int) -> bool:
        """Whether `allocate(seq)` followed by `append_slots(seq, num_new_tokens)` fits now."""
        assert not seq.block_table, "can_allocate is for sequences that hold no blocks"
        hits = self._cached_prefix(seq)
        revived = sum(1 for b in hits if self.blocks[b].ref_count == 0)
        needed = seq.num_blocks_for(len(hits) * self.block_size + num_new_tokens) - len(hits)
        return needed + revived <= self.num_free_blocks

    def allocate(self, seq: Sequence) -> None:
        """Pin the cached prefix blocks and mark their tokens computed; the rest comes via append_slots."""
        assert not seq.block_table and seq.num_computed_tokens == 0
        hits = self._cached_prefix(seq)
        for block_id in hits:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                del self.free[block_id]
            block.ref_count += 1
        seq.block_table = hits
        seq.num_hashed_blocks = len(hits)
        seq.num_computed_tokens = seq.num_cached_tokens = len(hits) * self.block_size
        self.prefix_hits += seq.num_cached_tokens
        self.prefix_queries += seq.num_tokens

    # -- growth --------------------------------------------------------------------------------------
    def _blocks_needed(self, seq: Sequence, num_new_tokens: int) -> int:
        return max(0, seq.num_blocks_for(seq.num_computed_tokens + num_new_tokens) - len(seq.block_table))

    def can_append_slots(self, seq: Sequence, num_new_tokens: int) -> bool:
        return self._blocks_needed(seq, num_new_tokens) <= self.num_free_blocks

    def append_slots(self, seq: Sequence, num_new_tokens: int) -> None:
        """Give `seq` enough blocks for its next `num_new_tokens` tokens."""
        needed = self._blocks_needed(seq, num_new_tokens)
        assert needed <= self.num_free_blocks, "append_slots without a successful can_append_slots"
        seq.block_table.extend(self._take_free_block() for _ in range(needed))

    def cache_full_blocks(self, seq: Sequence) -> None:
        """Register the hash of every block that is now full of computed tokens (after a forward).

        Blocks fill in order, so only those after `seq.num_hashed_blocks` are new: the work per step
        does not grow with the context."""
        if not self.enable_prefix_caching:
            return
        start, full = seq.num_hashed_blocks, seq.num_computed_tokens // self.block_size
        parent = self.blocks[seq.block_table[start - 1]].hash if start else None
        for i in range(start, full):
            block = self.blocks[seq.block_table[i]]
            assert block.hash is None, "a block past num_hashed_blocks came from the free list, unhashed"
            block.token_ids = seq.block_tokens(i)
            block.hash = parent = chain_hash(parent, block.token_ids)
            self.hash_to_block.setdefault(block.hash, block.block_id)
        seq.num_hashed_blocks = max(start, full)

    def free_seq(self, seq: Sequence) -> None:
        """Release a finished or preempted sequence's blocks; tail blocks go first so prefixes live longest."""
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            assert block.ref_count > 0, f"double free of block {block_id}"
            block.ref_count -= 1
            if block.ref_count == 0:
                if block.hash is None or self.hash_to_block.get(block.hash) != block_id:
                    block.hash, block.token_ids = None, ()
                    self.free[block_id] = None
                    self.free.move_to_end(block_id, last=False)  # nothing to reuse: hand it out first
                else:
                    self.free[block_id] = None
        seq.block_table = []
        seq.num_hashed_blocks = seq.num_computed_tokens = 0

    def reset_prefix_cache(self) -> bool:
        """Forget every cached prefix, so the next requests compute all their tokens; False (and nothing
        forgotten) while a sequence holds blocks. For benchmarks that repeat a workload: without it the
        second run would be served from the first run's K/V."""
        if self.num_used_blocks:
            return False
        self.hash_to_block.clear()
        for block in self.blocks:
            block.hash, block.token_ids = None, ()
        return True

    def check_invariants(self, live: list[Sequence] | None = None) -> None:
        """Assert the bookkeeping is consistent; `live` (all sequences holding blocks) also checks ref counts."""
        for block in self.blocks:
            assert block.ref_count >= 0
            assert (block.ref_count == 0) == (block.block_id in self.free), block
        for h, block_id in self.hash_to_block.items():
            assert self.blocks[block_id].hash == h
        if live is not None:
            refs = [0] * self.num_blocks
            for seq in live:
                assert len(set(seq.block_table)) == len(seq.block_table), seq
                assert seq.num_hashed_blocks <= seq.num_computed_tokens // self.block_size, seq
                assert all(self.blocks[b].hash is not None for b in seq.block_table[: seq.num_hashed_blocks]), seq
                for block_id in seq.block_table:
                    refs[block_id] += 1
            assert refs == [b.ref_count for b in self.blocks], "ref counts disagree with block tables"

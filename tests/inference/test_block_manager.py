"""The paged KV-cache bookkeeping: allocation, ref counts, prefix reuse, eviction, and no leaks."""

from __future__ import annotations

import random

import pytest

from inference.block_manager import BlockManager
from inference.sampling_params import SamplingParams
from inference.sequence import Sequence


def seq(tokens: list[int], block_size: int = 4) -> Sequence:
    return Sequence(tokens, SamplingParams(max_tokens=8), block_size)


def compute(bm: BlockManager, s: Sequence, n: int) -> None:
    """What one scheduled step does to a sequence: slots, then (after the forward) progress and hashes."""
    assert bm.can_append_slots(s, n)
    bm.append_slots(s, n)
    s.num_computed_tokens += n
    bm.cache_full_blocks(s)


def test_a_new_sequence_gets_just_enough_blocks_for_the_tokens_scheduled():
    bm = BlockManager(num_blocks=8, block_size=4)
    s = seq(list(range(10)))
    assert bm.can_allocate(s, 10)
    bm.allocate(s)
    compute(bm, s, 10)
    assert len(s.block_table) == 3
    assert bm.num_free_blocks == 5
    bm.check_invariants([s])


def test_decoding_adds_a_block_only_when_the_last_one_is_full():
    bm = BlockManager(num_blocks=8, block_size=4)
    s = seq(list(range(7)))
    bm.allocate(s)
    compute(bm, s, 7)
    s.token_ids.append(99)
    compute(bm, s, 1)
    assert len(s.block_table) == 2
    s.token_ids.append(98)
    compute(bm, s, 1)
    assert len(s.block_table) == 3


def test_can_append_slots_refuses_when_no_block_is_free():
    bm = BlockManager(num_blocks=2, block_size=4)
    s = seq(list(range(8)))
    bm.allocate(s)
    compute(bm, s, 8)
    s.token_ids.append(1)
    assert not bm.can_append_slots(s, 1)


def test_a_shared_prefix_is_served_from_the_cache_and_ref_counted():
    bm = BlockManager(num_blocks=16, block_size=4)
    a = seq(list(range(12)) + [50])
    bm.allocate(a)
    compute(bm, a, a.num_tokens)
    b = seq(list(range(12)) + [60, 61])
    assert bm.num_cached_tokens(b) == 12
    bm.allocate(b)
    assert b.num_computed_tokens == 12 and b.block_table == a.block_table[:3]
    assert [bm.blocks[i].ref_count for i in a.block_table[:3]] == [2, 2, 2]
    bm.check_invariants([a, b])
    bm.free_seq(a)
    assert [bm.blocks[i].ref_count for i in b.block_table] == [1, 1, 1]
    bm.check_invariants([b])


def test_the_last_token_is_never_served_from_the_cache_so_there_are_always_logits():
    bm = BlockManager(num_blocks=8, block_size=4)
    a = seq(list(range(8)))
    bm.allocate(a)
    compute(bm, a, 8)
    same = seq(list(range(8)))
    assert bm.num_cached_tokens(same) == 4  # the second block holds the last token: recomputed


def test_a_different_earlier_block_breaks_the_chain_even_if_a_later_block_matches():
    bm = BlockManager(num_blocks=8, block_size=4)
    a = seq([1, 2, 3, 4, 5, 6, 7, 8, 9])
    bm.allocate(a)
    compute(bm, a, 9)
    b = seq([0, 2, 3, 4, 5, 6, 7, 8, 9])
    assert bm.num_cached_tokens(b) == 0


def test_freed_prefix_blocks_stay_reusable_until_evicted_by_new_allocations():
    bm = BlockManager(num_blocks=4, block_size=4)
    a = seq(list(range(9)))
    bm.allocate(a)
    compute(bm, a, 9)
    bm.free_seq(a)
    assert bm.num_free_blocks == 4
    again = seq(list(range(9)))
    assert bm.num_cached_tokens(again) == 8
    other = seq([100 + i for i in range(16)])  # needs every block: evicts the cached ones
    bm.allocate(other)
    compute(bm, other, 16)
    assert bm.num_cached_tokens(seq(list(range(9)))) == 0
    bm.check_invariants([other])


def test_can_allocate_counts_revived_cached_blocks_against_the_free_list():
    bm = BlockManager(num_blocks=3, block_size=4)
    a = seq(list(range(9)))
    bm.allocate(a)
    compute(bm, a, 9)
    bm.free_seq(a)
    b = seq(list(range(8)) + [70, 71, 72, 73, 74])  # 2 cached blocks + 5 new tokens = 2 more blocks
    assert not bm.can_allocate(b, 5)
    assert bm.can_allocate(b, 4)


def test_double_free_is_caught():
    bm = BlockManager(num_blocks=4, block_size=4)
    a = seq(list(range(5)))
    bm.allocate(a)
    compute(bm, a, 5)
    table = list(a.block_table)
    bm.free_seq(a)
    a.block_table = table
    with pytest.raises(AssertionError):
        bm.free_seq(a)


def test_random_workload_never_leaks_and_keeps_invariants():
    rng = random.Random(0)
    bm = BlockManager(num_blocks=32, block_size=4)
    live: list[Sequence] = []
    for _ in range(400):
        if live and (rng.random() < 0.3 or bm.num_free_blocks < 3):
            victim = live.pop(rng.randrange(len(live)))
            bm.free_seq(victim)
        else:
            prefix = [1, 2, 3, 4, 5, 6, 7, 8][: rng.choice([0, 4, 8])]
            s = seq(prefix + [rng.randrange(10, 20) for _ in range(rng.randrange(1, 10))])
            n = s.num_tokens - bm.num_cached_tokens(s)
            if bm.can_allocate(s, n):
                bm.allocate(s)
                compute(bm, s, s.num_tokens - s.num_computed_tokens)
                live.append(s)
        for s in live:
            if rng.random() < 0.5:
                s.token_ids.append(rng.randrange(10, 20))
                if bm.can_append_slots(s, 1):
                    compute(bm, s, 1)
                else:
                    s.token_ids.pop()
        bm.check_invariants(live)
    for s in live:
        bm.free_seq(s)
    assert bm.num_free_blocks == bm.num_blocks
    bm.check_invariants([])


def test_reset_prefix_cache_forgets_cached_prefixes_but_not_while_blocks_are_held():
    bm = BlockManager(num_blocks=4, block_size=4)
    a = seq(list(range(9)))
    bm.allocate(a)
    compute(bm, a, 9)
    assert not bm.reset_prefix_cache()  # a still holds its blocks: nothing is forgotten
    bm.free_seq(a)
    assert bm.num_cached_tokens(seq(list(range(9)))) == 8
    assert bm.reset_prefix_cache()
    assert bm.num_cached_tokens(seq(list(range(9)))) == 0
    assert bm.num_free_blocks == 4
    bm.check_invariants([])

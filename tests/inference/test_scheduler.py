"""Iteration-level scheduling: token budget, chunked prefill, max_num_seqs, FCFS, preemption order, abort."""

from __future__ import annotations

import pytest

from inference.block_manager import BlockManager
from inference.sampling_params import SamplingParams
from inference.scheduler import Scheduler
from inference.sequence import Sequence, SequenceStatus


def make(num_blocks: int = 64, block_size: int = 4, max_num_seqs: int = 8, budget: int = 32) -> Scheduler:
    return Scheduler(BlockManager(num_blocks, block_size), max_num_seqs, budget)


def add(sched: Scheduler, n: int, first: int = 0) -> Sequence:
    s = Sequence([first + i for i in range(n)], SamplingParams(max_tokens=100), sched.block_manager.block_size)
    sched.add(s)
    return s


def step(sched: Scheduler, new_token: int = 7):
    """schedule -> (pretend forward) -> postprocess -> append a token to every sequence that sampled."""
    out = sched.schedule()
    sampled = [s for i, s in enumerate(out.seqs) if out.samples(i)]
    sched.postprocess(out)
    for s in sampled:
        s.token_ids.append(new_token)
    return out


def test_prefill_is_chunked_by_the_token_budget():
    sched = make(budget=10)
    s = add(sched, 25)
    assert [step(sched).num_tokens for _ in range(3)] == [[10], [10], [5]]
    assert s.num_computed_tokens == 25 and s.num_tokens == 26  # the last chunk sampled a token
    assert step(sched).num_tokens == [1]


def test_running_sequences_decode_before_new_prompts_are_admitted():
    sched = make(budget=10)
    a = add(sched, 4)
    step(sched)
    b = add(sched, 30)
    out = step(sched)
    assert out.seqs == [a, b] and out.num_tokens == [1, 9]


def test_max_num_seqs_caps_the_running_batch_and_the_rest_wait_in_order():
    sched = make(max_num_seqs=2, budget=100)
    seqs = [add(sched, 3, first=10 * i) for i in range(4)]
    out = step(sched)
    assert out.seqs == seqs[:2]
    assert list(sched.waiting) == seqs[2:]


def test_waiting_sequences_are_admitted_first_come_first_served():
    sched = make(budget=5)
    seqs = [add(sched, 5, first=10 * i) for i in range(3)]
    order = [step(sched).seqs[-1] for _ in range(3)]
    assert order == seqs


def test_when_blocks_run_out_the_newest_running_sequence_is_preempted_and_requeued_first():
    sched = make(num_blocks=6, block_size=4, budget=100)
    old = add(sched, 8, first=0)
    young = add(sched, 8, first=100)
    late = add(sched, 3, first=200)
    step(sched)  # old and young take 2 blocks each, late 1 more: 5 of 6
    for _ in range(4):
        step(sched)  # decoding: someone needs a 7th block
    assert sched.num_preemptions >= 1
    assert old.status is SequenceStatus.RUNNING
    assert sched.waiting[0] in (young, late)
    assert all(s.block_table == [] and s.num_computed_tokens == 0 for s in sched.waiting)
    sched.block_manager.check_invariants(sched.running)


def test_a_preempted_sequence_resumes_and_everything_finishes_without_deadlock_or_leaks():
    sched = make(num_blocks=8, block_size=4, budget=16, max_num_seqs=4)
    seqs = [add(sched, 6, first=10 * i) for i in range(4)]
    for _ in range(200):
        if not sched.has_unfinished():
            break
        step(sched)
        for s in list(sched.running):
            if s.num_completion_tokens >= 8 and s.num_computed_tokens == s.num_tokens - 1:
                sched.finish(s, "length")
        sched.remove_finished()
        sched.block_manager.check_invariants(sched.running)
    assert not sched.has_unfinished()
    assert sched.num_preemptions > 0
    assert all(s.num_completion_tokens >= 8 for s in seqs)
    assert sched.block_manager.num_free_blocks == sched.block_manager.num_blocks


def test_abort_frees_the_blocks_of_a_running_sequence():
    sched = make()
    s = add(sched, 10)
    step(sched)
    assert sched.block_manager.num_used_blocks == 3
    assert sched.abort(s.seq_id) is s
    assert s.finish_reason == "abort" and s.status is SequenceStatus.FINISHED
    assert sched.block_manager.num_used_blocks == 0
    assert sched.abort(s.seq_id) is None


def test_abort_removes_a_waiting_sequence():
    sched = make(max_num_seqs=1)
    add(sched, 3)
    waiting = add(sched, 3, first=50)
    step(sched)
    assert sched.abort(waiting.seq_id) is waiting
    assert not sched.waiting


def test_a_prompt_larger_than_the_whole_cache_is_refused_up_front():
    sched = make(num_blocks=2, block_size=4)
    with pytest.raises(ValueError, match="does not fit"):
        add(sched, 8)

"""The one timing helper: how many calls it makes, what it times, and what it refuses."""
from __future__ import annotations

import itertools

import pytest

from inference.timing import timings


def test_timings_returns_one_sample_per_timed_run_after_the_untimed_warmup():
    calls = []
    samples = timings(lambda: calls.append(1), 3, warmup=2)
    assert len(samples) == 3 and len(calls) == 5 and all(s >= 0 for s in samples)


def test_timings_reads_the_given_clock_around_each_call_and_syncs_on_both_sides():
    ticks = itertools.count(0, 5)
    events = []
    samples = timings(lambda: events.append("call"), 2, sync=lambda: events.append("sync"),
                      clock=lambda: float(next(ticks)))
    assert samples == [5.0, 5.0]
    assert events == ["sync", "call", "sync"] * 2


def test_timings_refuses_zero_runs_instead_of_returning_nothing_to_take_a_minimum_of():
    with pytest.raises(ValueError, match="runs must be at least 1"):
        timings(lambda: None, 0)

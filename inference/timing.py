"""Wall-clock timing of repeated calls: the one timing helper of every benchmark.

The engine's own `inference/bench.py` and the benchmarks under `benchmarks/` time their work with
`timings`; it lives in the engine package because the engine may not import anything outside it.
"""
from __future__ import annotations

import time
from collections.abc import Callable


def timings(fn: Callable[[], object], runs: int, *, warmup: int = 0, sync: Callable[[], object] | None = None,
            clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Seconds (by `clock`) of each of `runs` calls of `fn`, after `warmup` untimed calls.

    `sync` runs before the clock starts and before it stops (a CUDA synchronise: kernels are
    asynchronous, so without it a run would time the launch, not the work). Callers take the min
    (the run least disturbed by other work) or the median (a typical run) of what comes back.
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        if sync is not None:
            sync()
        start = clock()
        fn()
        if sync is not None:
            sync()
        samples.append(clock() - start)
    return samples

"""Prometheus text exposition for the server's /metrics: gauges read live, counters and histograms kept here.

Written by the engine loop thread (observe) and read by HTTP threads (render); each histogram has
its own lock so a scrape never sees a half-updated bucket set.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import deque

TTFT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 5.0)


class Histogram:
    def __init__(self, name: str, help_text: str, buckets: tuple[float, ...]) -> None:
        self.name, self.help, self.buckets = name, help_text, buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.lock = threading.Lock()

    def observe(self, value: float) -> None:
        with self.lock:
            self.counts[bisect.bisect_left(self.buckets, value)] += 1
            self.total += value

    def render(self) -> list[str]:
        with self.lock:
            counts, total = list(self.counts), self.total
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, count in zip(self.buckets, counts, strict=False):
            running += count
            lines.append(f'{self.name}_bucket{{le="{bound}"}} {running}')
        running += counts[-1]
        lines += [f'{self.name}_bucket{{le="+Inf"}} {running}', f"{self.name}_sum {total}", f"{self.name}_count {running}"]
        return lines


class ThroughputMeter:
    """Generated tokens per second over a sliding window (default 10 s)."""

    def __init__(self, window_s: float = 10.0) -> None:
        self.window_s = window_s
        self.events: deque[tuple[float, int]] = deque()
        self.lock = threading.Lock()

    def add(self, n: int, now: float | None = None) -> None:
        with self.lock:
            self.events.append((now or time.monotonic(), n))

    def rate(self, now: float | None = None) -> float:
        now = now or time.monotonic()
        with self.lock:
            while self.events and self.events[0][0] < now - self.window_s:
                self.events.popleft()
            return sum(n for _, n in self.events) / self.window_s


def _sample(name: str, help_text: str, value: float, kind: str) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {value}"]


def gauge(name: str, help_text: str, value: float) -> list[str]:
    """A value read live that may go up or down (sequences running, blocks in use)."""
    return _sample(name, help_text, value, "gauge")


def counter(name: str, help_text: str, value: float) -> list[str]:
    """A running total that only grows while the server lives (tokens generated, preemptions)."""
    return _sample(name, help_text, value, "counter")

"""Geometry for the inline-SVG charts on the advisor result page (memory breakdown, latency).

Called by frontend.views.advisor while rendering; pure functions of the advisor's `estimates`
dict, so the chart shows only numbers the advisor produced. Templates draw the shapes; every
chart also has a data table for screen readers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

PALETTE = ("#0b5cad", "#b35900", "#116329", "#8250df", "#a40e26", "#4a5360")
_GIB_KEY = re.compile(r"^(?P<name>[a-z_]+)_gib$")
_PCT_KEY = re.compile(r"^(?P<metric>[a-z]+)_p(?P<pct>\d{1,2})_ms$")
_METRIC_LABELS = {"ttft": "time to first token", "tpot": "time per output token", "latency": "end-to-end latency",
                  "e2e": "end-to-end latency", "itl": "inter-token latency"}


@dataclass(frozen=True)
class Segment:
    label: str
    value: float
    x: float
    width: float
    color: str


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    y: float
    width: float
    color: str


@dataclass(frozen=True)
class BarGroup:
    metric: str
    label: str
    bars: list[Bar]


def memory_segments(estimates: dict, gpu_memory_gib: float | None = None, width: float = 600.0) -> list[Segment]:
    """Stacked-bar segments for each `<part>_gib` estimate (weights, KV cache, ...), scaled to `width`.

    The scale is the GPU memory when known (so free memory shows as the gap), else the sum of parts.
    """
    parts = []
    for key, value in estimates.items():
        match = _GIB_KEY.match(key)
        if match and isinstance(value, int | float) and value > 0 and match["name"] not in {"gpu_memory", "total"}:
            parts.append((match["name"].replace("_", " "), float(value)))
    total = sum(v for _, v in parts)
    scale = max(total, float(gpu_memory_gib or 0.0))
    if scale <= 0:
        return []
    segments, x = [], 0.0
    for i, (label, value) in enumerate(parts):
        w = width * value / scale
        segments.append(Segment(label, round(value, 2), round(x, 1), round(w, 1), PALETTE[i % len(PALETTE)]))
        x += w
    return segments


def latency_groups(estimates: dict, width: float = 440.0) -> list[BarGroup]:
    """Bars for each predicted percentile (`ttft_p50_ms`, `ttft_p95_ms`, ...), one group per metric.

    Each group shares one scale (its largest percentile), so p50 → p99 reads as the spread.
    """
    by_metric: dict[str, list[tuple[int, float]]] = {}
    for key, value in estimates.items():
        match = _PCT_KEY.match(key)
        if match and isinstance(value, int | float) and value >= 0:
            by_metric.setdefault(match["metric"], []).append((int(match["pct"]), float(value)))
    groups = []
    for metric, points in by_metric.items():
        points.sort()
        top = max(v for _, v in points) or 1.0
        bars = [
            Bar(f"p{pct}", round(v, 1), 22.0 * i, round(width * v / top, 1), PALETTE[i % len(PALETTE)])
            for i, (pct, v) in enumerate(points)
        ]
        groups.append(BarGroup(metric, _METRIC_LABELS.get(metric, metric), bars))
    return groups

"""Geometry for the inline-SVG charts: the advisor result page (memory breakdown, latency) and the
dashboard's value matrix (one point per paper: production value against implementation cost).

Called by the views while rendering; pure functions of numbers the advisor or the scorer produced.
Templates draw the shapes; every chart also has a data table for screen readers.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class MatrixPoint:
    arxiv_id: str
    title: str
    value: float
    cost: float
    quadrant: str
    x: float
    y: float
    value_reasons: list[str] = field(default_factory=list)
    cost_reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MatrixChart:
    """A square plot of `axis_max` x `axis_max` units inside a `width` x `height` SVG viewBox."""

    width: float
    height: float
    left: float
    top: float
    size: float
    axis_max: float
    points: list[MatrixPoint]
    ticks: list[tuple[float, float, float]]  # (value, x position, y position)
    split_x: float  # the cost boundary of the quadrants, in SVG units
    split_y: float  # the value boundary

    @property
    def right(self) -> float:
        return self.left + self.size

    @property
    def bottom(self) -> float:
        return self.top + self.size

    @property
    def quick_width(self) -> float:
        """Width of the quick-win zone (low cost: from the y axis to the cost boundary)."""
        return round(self.split_x - self.left, 1)

    @property
    def quick_height(self) -> float:
        """Height of the quick-win zone (high value: from the top down to the value boundary)."""
        return round(self.split_y - self.top, 1)

    @property
    def middle_x(self) -> float:
        return self.left + self.size / 2

    @property
    def middle_y(self) -> float:
        return self.top + self.size / 2


MATRIX_SPREAD = 7.0  # SVG units between neighbouring papers that share the same (cost, value)
GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))  # successive points of a sunflower spiral never line up


def value_matrix_chart(scores: list, high_value: float, high_cost: float, axis_max: float = 5.0,
                       size: float = 280.0) -> MatrixChart:
    """Point positions for each score (x: implementation_cost, y: production_value, up is more value).

    Scores are discrete sums, so many papers share a position: those are spread on a sunflower spiral
    around it (in arXiv-id order, so the picture is stable) instead of hiding each other. The spiral
    is at most half a score unit wide, and every point stays inside the plot, however many papers
    share the spot (a fresh install has ~200 unread seed papers on one).
    """
    left, top = 46.0, 10.0
    scale = size / axis_max

    def px(cost: float) -> float:
        return left + min(max(cost, 0.0), axis_max) * scale

    def py(value: float) -> float:
        return top + size - min(max(value, 0.0), axis_max) * scale

    groups: dict[tuple[float, float], list] = defaultdict(list)
    for score in sorted(scores, key=lambda s: s.paper.arxiv_id):
        groups[(score.implementation_cost, score.production_value)].append(score)
    points = []
    for (cost, value), members in groups.items():
        step = min(MATRIX_SPREAD, scale / 2 / math.sqrt(len(members)))
        for i, score in enumerate(members):
            radius = step * math.sqrt(i)
            x = min(max(px(cost) + radius * math.cos(i * GOLDEN_ANGLE), left), left + size)
            y = min(max(py(value) + radius * math.sin(i * GOLDEN_ANGLE), top), top + size)
            reasons = score.value_matrix or {}
            points.append(MatrixPoint(
                score.paper.arxiv_id, score.paper.title, value, cost, score.quadrant, round(x, 1), round(y, 1),
                list(reasons.get("value", [])), list(reasons.get("cost", []))))
    ticks = [(float(t), px(t), py(t)) for t in range(int(axis_max) + 1)]
    return MatrixChart(left + size + 12, top + size + 46, left, top, size, axis_max, points, ticks,
                       px(high_cost), py(high_value))

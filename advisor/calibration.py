"""Fitted performance constants (advisor/catalog/calibration.json), validated when first read.

Read by advisor.estimate for every simulated configuration: which aiconfigurator system stands for
each of our GPUs, which aiconfigurator backend for each engine, and per engine the constants
`python -m benchmarks.perf_accuracy --fit` fitted on measured serving runs: the fixed per-request
frontend cost (tokenisation, scheduling, detokenisation; plus a share per concurrent stream) and, for
both step models, a time scale and fixed per-step and per-sequence costs. Engines without measured rows use the `default` entry (fitted on all rows pooled).
A release with enough measured runs of its own also carries a decode correction (ReleaseFit): how far
its runs sit from the engine's fit, e.g. an older release than the per-op database measured.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from advisor.catalog import load_json
from advisor.model_specs import ModelSpec
from advisor.perf import Efficiency, moe_floor_s


class CalibrationError(ValueError):
    """calibration.json is malformed: the message names the entry."""


@dataclass(frozen=True)
class StepFit:
    """Multiply a step model's decode time by `scale` and its prompt (prefill) time by `prefill_scale`
    (fitted on TPOT and on TTFT respectively: decode is bound by memory, prefill by compute), add
    `step_overhead_s` per iteration, `per_seq_overhead_s` per sequence in it (sampling, metadata) and
    `per_layer_overhead_s` per layer (the roofline's kernel floors), and `per_moe_layer_overhead_s` more per
    layer of a model with experts (the MoE kernels' floors)."""

    scale: float
    step_overhead_s: float
    per_seq_overhead_s: float = 0.0
    prefill_scale: float = 1.0
    per_layer_overhead_s: float = 0.0  # roofline only: measured per-op tables already hold each layer's floor
    per_moe_layer_overhead_s: float = 0.0  # the extra floor of an MoE layer's kernels (router, top-k, permutation)

    def moe_floor_s(self, spec: ModelSpec) -> float:
        """The MoE kernels' latency floor per step for `spec`: its layers' share, 0 for a dense model."""
        return moe_floor_s(self.per_moe_layer_overhead_s, spec)

    def decode_times(self, factor: float) -> StepFit:
        """This fit with every decode-time term multiplied by `factor` (a release's correction); the
        prefill scale is left as it is."""
        return replace(self, scale=self.scale * factor, step_overhead_s=self.step_overhead_s * factor,
                       per_seq_overhead_s=self.per_seq_overhead_s * factor,
                       per_layer_overhead_s=self.per_layer_overhead_s * factor,
                       per_moe_layer_overhead_s=self.per_moe_layer_overhead_s * factor)

    def efficiency(self) -> Efficiency:
        """The roofline efficiencies this fit stands for: the default ones divided by the scales."""
        base = Efficiency()
        return Efficiency(bandwidth=base.bandwidth / self.scale, compute=base.compute / self.prefill_scale,
                          step_overhead_s=self.step_overhead_s, per_seq_overhead_s=self.per_seq_overhead_s,
                          per_layer_overhead_s=self.per_layer_overhead_s,
                          per_moe_layer_overhead_s=self.per_moe_layer_overhead_s)


@dataclass(frozen=True)
class ReleaseFit:
    """One release's decode correction: the median ratio of measured to estimated TPOT over its measured
    runs under the engine's fit (`rows` runs of `models` models; fitted only where several models were
    run, so that one model's quirk is not charged to the release). Prefill is not corrected: a TTFT
    ratio pooled over GPUs disagreed between them and made TPOT worse where prefills share steps."""

    decode: float
    rows: int
    models: int


@dataclass(frozen=True)
class EngineFit:
    """One engine's fitted constants. A request's frontend cost (tokenisation, scheduling,
    detokenisation) is `request_overhead_s` plus `per_stream_overhead_s` for every concurrent stream
    the frontend is also serving."""

    request_overhead_s: float
    per_stream_overhead_s: float
    silicon: StepFit
    roofline: StepFit
    rows: int  # measured rows the fit used (0 for the pooled default)
    releases: dict[str, ReleaseFit] = field(default_factory=dict)  # release -> its decode correction

    def for_release(self, release: str | None) -> EngineFit:
        """These constants as they hold for `release`: both step models' decode times corrected where the
        release has a fit of its own, else unchanged."""
        own = self.releases.get(release or "")
        if own is None:
            return self
        return replace(self, silicon=self.silicon.decode_times(own.decode),
                       roofline=self.roofline.decode_times(own.decode))

    def frontend_s(self, concurrency: int) -> float:
        """The fixed cost one request pays before scheduling, with `concurrency` streams open."""
        return self.request_overhead_s + self.per_stream_overhead_s * concurrency


@dataclass(frozen=True)
class Calibration:
    systems: dict[str, str]  # our GPU id -> aiconfigurator system
    backends: dict[str, str]  # our engine id -> aiconfigurator backend
    engines: dict[str, EngineFit]
    provenance: dict[str, Any]

    def engine(self, engine_id: str, release: str | None = None) -> EngineFit:
        """The engine's fitted constants (the pooled default for an engine without measured rows), with
        `release`'s own decode correction where it has one."""
        return (self.engines.get(engine_id) or self.engines["default"]).for_release(release)


def _number(where: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CalibrationError(f"{where}: expected a number, got {value!r}")
    if not low <= value <= high:
        raise CalibrationError(f"{where}: {value} is outside [{low}, {high}]")
    return float(value)


def _step_fit(where: str, raw: Any) -> StepFit:
    if not isinstance(raw, dict):
        raise CalibrationError(f"{where}: expected an object with scale and step_overhead_s")
    return StepFit(scale=_number(f"{where}.scale", raw.get("scale"), 0.05, 20.0),
                   step_overhead_s=_number(f"{where}.step_overhead_s", raw.get("step_overhead_s"), 0.0, 0.1),
                   per_seq_overhead_s=_number(f"{where}.per_seq_overhead_s", raw.get("per_seq_overhead_s", 0.0), 0.0, 0.01),
                   prefill_scale=_number(f"{where}.prefill_scale", raw.get("prefill_scale", 1.0), 0.05, 20.0),
                   per_layer_overhead_s=_number(f"{where}.per_layer_overhead_s", raw.get("per_layer_overhead_s", 0.0),
                                                0.0, 0.001),
                   per_moe_layer_overhead_s=_number(f"{where}.per_moe_layer_overhead_s",
                                                    raw.get("per_moe_layer_overhead_s", 0.0), 0.0, 0.002))


def _release_fits(where: str, raw: Any) -> dict[str, ReleaseFit]:
    if not isinstance(raw, dict):
        raise CalibrationError(f"{where}: expected an object of release -> correction")
    fits: dict[str, ReleaseFit] = {}
    for release, fit in raw.items():
        at = f"{where}.{release}"
        if not isinstance(fit, dict):
            raise CalibrationError(f"{at}: expected an object with decode, rows and models")
        fits[release] = ReleaseFit(decode=_number(f"{at}.decode", fit.get("decode"), 0.2, 5.0),
                                   rows=int(_number(f"{at}.rows", fit.get("rows"), 1, 1e6)),
                                   models=int(_number(f"{at}.models", fit.get("models"), 1, 1e4)))
    return fits


def parse(data: dict[str, Any]) -> Calibration:
    """Validate a parsed calibration document; raises CalibrationError naming the first bad entry."""
    for key in ("fitted", "systems", "backends", "engines"):
        if not isinstance(data.get(key), dict):
            raise CalibrationError(f"calibration.json: '{key}' must be an object")
    fitted = data["fitted"]
    for key in ("source", "rows", "seed", "date", "command", "held_out_systems"):
        if key not in fitted:
            raise CalibrationError(f"calibration.json: fitted.{key} is missing (where the constants came from)")
    if "h100_sxm" not in fitted["held_out_systems"]:
        raise CalibrationError("calibration.json: h100_sxm rows are held out for independent evaluation; "
                               "fitted.held_out_systems must name them")
    engines: dict[str, EngineFit] = {}
    for name, raw in data["engines"].items():
        where = f"calibration.json: engines.{name}"
        if not isinstance(raw, dict):
            raise CalibrationError(f"{where}: expected an object")
        engines[name] = EngineFit(
            request_overhead_s=_number(f"{where}.request_overhead_s", raw.get("request_overhead_s"), 0.0, 2.0),
            per_stream_overhead_s=_number(f"{where}.per_stream_overhead_s", raw.get("per_stream_overhead_s", 0.0), 0.0, 0.1),
            silicon=_step_fit(f"{where}.silicon", raw.get("silicon")),
            roofline=_step_fit(f"{where}.roofline", raw.get("roofline")),
            rows=int(_number(f"{where}.rows", raw.get("rows", 0), 0, 1e6)),
            releases=_release_fits(f"{where}.releases", raw.get("releases", {})))
    if "default" not in engines:
        raise CalibrationError("calibration.json: engines.default is missing (used for engines without rows)")
    for section in ("systems", "backends"):
        for key, value in data[section].items():
            if not isinstance(value, str) or not value:
                raise CalibrationError(f"calibration.json: {section}.{key} must be a non-empty string")
    return Calibration(systems=dict(data["systems"]), backends=dict(data["backends"]), engines=engines,
                       provenance=dict(fitted))


@cache
def calibration() -> Calibration:
    """The shipped calibration, parsed once per process."""
    return parse(load_json("calibration.json"))

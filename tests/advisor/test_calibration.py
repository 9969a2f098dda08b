"""The fitted constants in advisor/catalog/calibration.json are validated on load and say where they came from."""
from __future__ import annotations

import copy

import pytest

from advisor.calibration import CalibrationError, calibration, parse
from advisor.catalog import load_json


def _doc():
    return copy.deepcopy(load_json("calibration.json"))


def test_the_shipped_calibration_loads_and_names_its_rows_seed_and_date():
    cal = calibration()
    for key in ("source", "rows", "seed", "date", "command"):
        assert cal.provenance[key] != ""
    assert "h100_sxm" in cal.provenance["held_out_systems"]
    assert cal.engine("an-engine-without-rows") == cal.engines["default"]


def test_the_frontend_cost_grows_with_the_streams_it_serves():
    fit = calibration().engine("vllm")
    assert fit.frontend_s(64) == fit.request_overhead_s + 64 * fit.per_stream_overhead_s
    assert fit.frontend_s(64) >= fit.frontend_s(1) >= 0


@pytest.mark.parametrize("path, value, message", [
    (("engines", "default", "request_overhead_s"), -0.1, "request_overhead_s"),
    (("engines", "default", "silicon", "scale"), "fast", "silicon.scale"),
    (("engines", "default", "roofline", "step_overhead_s"), float("nan"), "roofline.step_overhead_s"),
    (("engines", "default", "per_stream_overhead_s"), 5, "per_stream_overhead_s"),
    (("engines", "default", "roofline", "per_layer_overhead_s"), 0.01, "roofline.per_layer_overhead_s"),
    (("engines", "default", "roofline", "per_moe_layer_overhead_s"), -1e-5, "roofline.per_moe_layer_overhead_s"),
    (("fitted", "held_out_systems"), ["b200_sxm"], "h100_sxm"),
    (("systems", "h200-sxm-141gb"), "", "systems.h200-sxm-141gb"),
    (("engines", "default", "releases"), {"0.16.0": {"decode": 9.0, "rows": 12, "models": 2}}, "releases.0.16.0.decode"),
    (("engines", "default", "releases"), {"0.16.0": {"decode": 1.0, "rows": 0, "models": 2}}, "releases.0.16.0.rows"),
    (("engines", "default", "releases"), {"0.16.0": 1.2}, "releases.0.16.0"),
    (("engines", "default", "releases"), [], "releases"),
])
def test_a_bad_entry_is_refused_with_its_name(path, value, message):
    doc = _doc()
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(CalibrationError, match=message.replace(".", r"\.")):
        parse(doc)


def test_missing_provenance_or_default_engine_is_refused():
    doc = _doc()
    del doc["fitted"]["seed"]
    with pytest.raises(CalibrationError, match="fitted.seed"):
        parse(doc)
    doc = _doc()
    del doc["engines"]["default"]
    with pytest.raises(CalibrationError, match="default"):
        parse(doc)


def test_a_release_with_its_own_runs_corrects_decode_times_and_no_other_release():
    doc = _doc()
    doc["engines"]["default"]["releases"] = {"0.16.0": {"decode": 1.25, "rows": 12, "models": 2}}
    cal = parse(doc)
    base, own = cal.engine("an-engine-without-rows"), cal.engine("an-engine-without-rows", "0.16.0")
    assert cal.engine("an-engine-without-rows", "0.18.0") == base
    for kind in ("silicon", "roofline"):
        was, now = getattr(base, kind), getattr(own, kind)
        assert now.scale == pytest.approx(1.25 * was.scale)
        assert now.step_overhead_s == pytest.approx(1.25 * was.step_overhead_s)
        assert now.per_seq_overhead_s == pytest.approx(1.25 * was.per_seq_overhead_s)
        assert now.per_moe_layer_overhead_s == pytest.approx(1.25 * was.per_moe_layer_overhead_s)
        assert now.prefill_scale == was.prefill_scale  # TTFT's prefill is the engine's, not corrected
    assert own.frontend_s(8) == base.frontend_s(8)

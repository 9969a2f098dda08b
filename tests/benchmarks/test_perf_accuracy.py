"""The perf-accuracy bench never reads h100_sxm rows and keeps its h200_sxm validation half apart from the fit half."""
from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest

from benchmarks import perf_accuracy
from benchmarks.perf_accuracy import (
    EVALUATED,
    HELD_OUT,
    attention_dp,
    case,
    engine_parallelism,
    gpus_per_node,
    read_rows,
    split,
)


def _write(path, systems):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "system", "silicon_ttft_ms"])
        for i, system in enumerate(systems):
            writer.writerow([f"row{i}", system, "100"])


def test_held_out_rows_are_dropped_before_they_are_parsed(tmp_path):
    path = tmp_path / "rows.csv"
    _write(path, ["h100_sxm", "h200_sxm", "b200_sxm", "h100_sxm", "h200_sxm"])
    rows = list(read_rows(str(path)))
    assert [r["system"] for r in rows] == ["h200_sxm", "b200_sxm", "h200_sxm"]
    with pytest.raises(ValueError, match="held-out"):
        split(rows + [{"id": "x", "system": "h100_sxm"}])


def test_the_shipped_rows_split_into_disjoint_halves_without_h100():
    rows = list(read_rows())
    sets = split(rows)
    ids = {name: {r["id"] for r in part} for name, part in sets.items()}
    assert not any(r["system"] in HELD_OUT for part in sets.values() for r in part)
    assert ids["fit"].isdisjoint(ids["validation"])
    assert {r["system"] for r in sets["fit"] + sets["validation"]} == {"h200_sxm"}
    assert abs(len(ids["fit"]) - len(ids["validation"])) <= 1
    assert "h200_sxm" not in {r["system"] for r in sets["other"]}
    assert [r["id"] for r in split(rows)["fit"]] == [r["id"] for r in sets["fit"]]  # seeded: the same every run


def test_iterating_with_split_fit_never_evaluates_the_validation_half():
    assert "validation" not in EVALUATED["fit"]
    assert set(EVALUATED["all"]) == {"validation", "fit", "other"}



def test_the_fit_recovers_an_moe_layer_floor_that_dense_rows_do_not_pay():

    from benchmarks.perf_accuracy import PER_MOE_LAYER_OVERHEADS_S, fit_step

    floor = PER_MOE_LAYER_OVERHEADS_S[5]
    cases, raw = [], []
    for i in range(8):
        moe = i % 2 == 1
        spec = SimpleNamespace(layers=20 + 10 * i, experts=64 if moe else 0)
        unscaled = 3.0 + i  # ms, as simulated with scale 1 and no fixed costs
        tpot = 2.0 * unscaled + (floor * spec.layers * 1e3 if moe else 0.0)
        cases.append(SimpleNamespace(spec=spec, concurrency=4 + i, tpot_ms=tpot))
        raw.append(unscaled)
    fit = fit_step(cases, raw, (0.0,), PER_MOE_LAYER_OVERHEADS_S)  # type: ignore[arg-type]
    assert fit.per_moe_layer_overhead_s == floor
    assert fit.scale == pytest.approx(2.0)
    assert (fit.step_overhead_s, fit.per_seq_overhead_s) == (0.0, 0.0)


def test_a_tp_recorded_as_tp_times_ep_is_read_as_the_engine_ran_it():
    # 64 / 8 / 8 on an 8-GPU node is an `--tp 8 --ep 8` run: attention TP 8, experts split 8 ways only
    assert gpus_per_node("h200_sxm") == 8
    assert engine_parallelism("h200_sxm", 64, 8, 8) == (8, 1)
    assert engine_parallelism("b200_sxm", 16, 4, 4) == (4, 1)
    # within the node, or with experts not split by EP, the row means what it says
    assert engine_parallelism("h200_sxm", 8, 1, 8) == (8, 1)
    assert engine_parallelism("h200_sxm", 8, 8, 1) == (8, 8)
    assert engine_parallelism("gb200", 36, 36, 1) == (36, 36)


def test_a_blank_attention_dp_is_read_from_the_parallel_layout_and_such_rows_are_out_of_scope():
    row = {"mode": "agg", "backend": "vllm", "attention_dp_size": "", "tp_size": "1", "moe_tp_size": "2",
           "moe_ep_size": "1"}
    assert attention_dp(row) == 2  # experts over 2 GPUs, attention on 1: two data-parallel ranks
    assert attention_dp({**row, "tp_size": "2", "moe_tp_size": "4"}) == 2
    assert case(row) is None  # the advisor recommends no attention data parallelism
    # the layout says what it says: a TP run, a TP+EP run, a dense row, the column set
    assert attention_dp({**row, "tp_size": "4", "moe_tp_size": "4"}) == 1
    assert attention_dp({**row, "tp_size": "4", "moe_tp_size": "1", "moe_ep_size": "4"}) == 1
    assert attention_dp({**row, "tp_size": "64", "moe_tp_size": "8", "moe_ep_size": "8"}) == 1
    assert attention_dp({**row, "tp_size": "2", "moe_tp_size": "1", "moe_ep_size": "0"}) == 1
    assert attention_dp({**row, "attention_dp_size": "4"}) == 4


def test_a_silicon_only_refit_keeps_the_roofline_blocks_and_says_when_they_were_fitted(monkeypatch):
    fitted = {"rows": 1, "request_overhead_s": 0.1, "per_stream_overhead_s": 0.0,
              "silicon": {"scale": 2.0, "step_overhead_s": 0.0}, "roofline": {"scale": 9.0, "step_overhead_s": 0.0}}
    monkeypatch.setattr(perf_accuracy, "_fit_group", lambda cases, roofline_too=True: dict(fitted))
    rows = [SimpleNamespace(row={"backend": backend}, release="") for backend in perf_accuracy.ENGINES]
    current = json.loads((perf_accuracy.CATALOG_DIR / "calibration.json").read_text(encoding="utf-8"))
    doc = perf_accuracy.fit(rows, "test rows", "silicon")  # type: ignore[arg-type]
    for engine, fits in doc["engines"].items():
        assert fits["silicon"]["scale"] == 2.0
        assert fits["roofline"] == current["engines"][engine]["roofline"]
    assert doc["fitted"]["command"].endswith("--fit silicon") and doc["fitted"]["roofline_fitted"]
    assert perf_accuracy.fit(rows, "test rows")["engines"]["vllm"]["roofline"]["scale"] == 9.0  # type: ignore[arg-type]


def test_a_release_gets_its_own_decode_correction_only_from_runs_of_several_models(monkeypatch):
    # every estimate says TPOT 10 ms; the measured TPOT sets the ratio
    monkeypatch.setattr(perf_accuracy, "advisor_silicon", lambda c, cal: (100.0, 10.0))

    def runs(release, models, count):
        return [SimpleNamespace(engine="vllm", release=release, row={"model_path": models[i % len(models)]},
                                tpot_ms=12.0 + i % 3) for i in range(count)]

    cases = (runs("0.16.0", ["a", "b"], 12) + runs("0.17.0", ["a"], 20) + runs("0.18.0", ["a", "b"], 11)
             + runs("gpt-oss-dev", ["a", "b"], 20) + runs("", ["a", "b"], 20))
    fits = perf_accuracy.fit_releases(cases, None)  # type: ignore[arg-type]
    assert fits == {"vllm": {"0.16.0": {"decode": 1.3, "rows": 12, "models": 2}}}


def test_release_numbers_are_told_from_image_tags():
    for release in ("0.16.0", "1.1.0rc2.post2", "0.5.6.post2", "0.12"):
        assert perf_accuracy.RELEASE.fullmatch(release)
    for tag in ("", "gpt-oss-dev", "glm5-hopper", "nightly-dev-20260216-d3bae71e", "nightly-5b8c30d62b754b57"):
        assert not perf_accuracy.RELEASE.fullmatch(tag)

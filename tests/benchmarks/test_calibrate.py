"""Calibration fitting: given measurements the model could have produced, the fit recovers them.

The real calibration runs our engine (minutes, `python -m benchmarks.calibrate`); here the fitting and
error arithmetic are checked on measurements generated from known efficiency factors.
"""
from __future__ import annotations

from advisor.perf import Efficiency, Hardware
from benchmarks.calibrate import QUICK, errors, fit, predict

HW = Hardware(bandwidth_bytes_s=40e9, flops=0.5e12, link_bytes_s=1e12, tp=1, pp=1)


def test_fit_recovers_efficiency_that_explains_the_measurements_and_predicts_held_out_workloads():
    truth = Efficiency(bandwidth=0.5, compute=0.35, step_overhead_s=0.02, per_seq_overhead_s=0.001, allreduce_latency_s=0.0)
    measured = [(w, predict(w, HW, 16, 50_000, truth)) for w in QUICK]
    fitted = fit(measured[:2], HW, 16, 50_000)
    for w, m in measured[2:]:
        assert all(abs(e) < 0.05 for e in errors(m, predict(w, HW, 16, 50_000, fitted)).values())


def test_errors_are_relative_and_signed():
    assert errors({"ttft_p50_ms": 100, "tpot_p50_ms": 10, "e2e_p95_ms": 1000, "throughput_tok_s": 50},
                  {"ttft_p50_ms": 120, "tpot_p50_ms": 8, "e2e_p95_ms": 1000, "throughput_tok_s": 50}) == {
        "ttft_p50_ms": 0.2, "tpot_p50_ms": -0.2, "e2e_p95_ms": 0.0, "throughput_tok_s": 0.0}

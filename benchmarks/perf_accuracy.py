"""`python -m benchmarks.perf_accuracy` (make bench-perf-accuracy): the advisor's TTFT/TPOT against measured serving runs.

Run by hand (a few minutes; not part of the test suite). The rows are aiconfigurator-core's
`systems/silicon_sample.csv` (measured end-to-end TTFT/TPOT of vLLM, SGLang and TRT-LLM in closed-loop
aggregated serving). `h100_sxm` rows are never read: the reader drops them before parsing, because they
are held out for independent evaluation. `h200_sxm` rows are split with a fixed seed into a fit half and
a validation half; the fit (`--fit`, which rewrites advisor/catalog/calibration.json) reads only the fit
half and the other systems. Printed per set, in one run: median absolute % error of TTFT and TPOT for
the advisor (aiconfigurator per-op step times under our simulator, and the fitted roofline fallback),
aiconfigurator's own estimate (its `run_agg`) and a naive roofline (one prompt's prefill; one decode
step at the full batch, default efficiencies). A row's figures are the means over every request its
benchmark client sent, so the simulator replays that client (CLIENT_LENGTH_RATIO, CLIENT_REQUESTS_PER_USER:
all users start at once, lengths spread, the first wave counted) and compares means. Targets on
validation: TTFT <= 30 %, TPOT <= 10 %.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import itertools
import json
import logging
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from advisor.calibration import Calibration, StepFit, calibration, parse
from advisor.catalog import CATALOG_DIR, gpus
from advisor.estimate import IN_FLIGHT_MIXING
from advisor.model_specs import ModelSpec, spec_from_config
from advisor.perf import Efficiency, Hardware, StepModel, StepTimes
from advisor.silicon import (
    SiliconStepModel,
    SiliconTarget,
    SiliconUnavailable,
    nearest_measured,
    nearest_version,
)
from advisor.simulate import SimConfig, Simulator, percentile

SEED = 20261201
HELD_OUT = frozenset({"h100_sxm"})  # never read, never fitted: independent evaluation by others
SPLIT_SYSTEM = "h200_sxm"
BATCHED_TOKENS = 8192  # the chunked-prefill budget these engines default to on Hopper/Blackwell (vLLM, SGLang, TRT-LLM)
ENGINES = {"vllm": "vllm", "sglang": "sglang", "trtllm": "tensorrt-llm"}  # CSV backend -> our engine id
# whether decode steps carry prompt chunks by default: vLLM V1 mixes them (chunked prefill on,
# https://docs.vllm.ai/en/latest/configuration/optimization.html); SGLang runs prefill batches apart from
# decode unless --enable-mixed-chunk (https://docs.sglang.ai/advanced_features/server_arguments.html);
# TRT-LLM's enable_chunked_prefill defaults to False (tensorrt_llm/llmapi/llm_args.py), but its in-flight
# batching runs those whole prompts in the generation steps (advisor.estimate.IN_FLIGHT_MIXING)
CHUNKED = {"vllm": True, "sglang": False, "trtllm": False}
MIXED_STEPS = {backend: CHUNKED[backend] or engine in IN_FLIGHT_MIXING for backend, engine in ENGINES.items()}
BITS = {"fp8": 8, "fp4": 4, "int4": 4, "bf16": 16, "": 16}
EVALUATED = {"all": ("validation", "fit", "other"), "fit": ("fit", "other")}  # per --split: the sets printed
# How the measured runs were driven (InferenceMAX's client, whose runs these rows are: its README's
# "Benchmark Client Configuration", read in the fork https://github.com/jyothisambolu/InferenceMAX; the
# rows' ISL/OSL pairs 1k/1k, 1k/8k, 8k/1k are its three): benchmark_serving.py
# --dataset-name random --random-range-ratio 0.8 --num-prompts $((CONC * 10)) --max-concurrency $CONC
# --request-rate inf --ignore-eos, i.e. every client starts at once, lengths are drawn between 0.8x and 1x
# of ISL/OSL, and the figures are over all CONC x 10 requests; the rows hold its mean TTFT and TPOT
# (bench["metrics"]["mean_ttft"], as aiconfigurator's InferenceX accuracy tooling records them).
CLIENT_LENGTH_RATIO = 0.8
CLIENT_REQUESTS_PER_USER = 10
SAMPLE = {"fit": 60, "other": 60}  # rows per backend simulated per set, seeded, to keep the run minutes long
Row = dict[str, str]


def silicon_csv() -> str:
    return str(resources.files("aiconfigurator_core") / "systems" / "silicon_sample.csv")


def read_rows(path: str | None = None) -> Iterator[Row]:
    """Every measured row except the held-out systems', which are dropped unparsed (by the system
    column alone) so nothing downstream can see them."""
    with open(path or silicon_csv(), encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        system = header.index("system")
        for values in reader:
            if values[system] in HELD_OUT:
                continue
            yield dict(zip(header, values, strict=True))


def split(rows: list[Row], seed: int = SEED) -> dict[str, list[Row]]:
    """{"fit": the seeded half of h200_sxm rows, "validation": the other half, "other": every other
    system's rows}. Held-out systems never appear (read_rows drops them; this refuses them too)."""
    if any(r["system"] in HELD_OUT for r in rows):
        raise ValueError("held-out rows reached the split")
    h200 = sorted((r for r in rows if r["system"] == SPLIT_SYSTEM), key=lambda r: r["id"])
    random.Random(seed).shuffle(h200)
    half = len(h200) // 2
    return {"fit": h200[:half], "validation": h200[half:], "other": [r for r in rows if r["system"] != SPLIT_SYSTEM]}


@cache
def _gpu_for_system() -> dict[str, str]:
    return {system: gpu for gpu, system in calibration().systems.items()}


def _plain(path: str) -> str:
    name = path.rsplit("/", 1)[-1].lower().removesuffix("-instruct")
    return name.removeprefix("meta-")


@cache
def aic_model_path(model_path: str) -> str:
    """The checkpoint aiconfigurator ships a config for under another spelling ("meta-llama/Llama-3.1-70B"
    is its "meta-llama/Meta-Llama-3.1-70B"; an -Instruct tune shares its base's shape), else the path."""
    from aiconfigurator_core.sdk import common

    shipped = sorted(str(m) for m in common.DefaultHFModels)
    if model_path in shipped:
        return model_path
    return next((m for m in shipped if _plain(m) == _plain(model_path)), model_path)


@cache
def _spec(model_path: str) -> ModelSpec | None:
    name = model_path.replace("/", "--") + "_config.json"
    ref = resources.files("aiconfigurator_core") / "model_configs" / name
    if not ref.is_file():
        return None
    return spec_from_config(model_path, json.loads(ref.read_text(encoding="utf-8")), {}, "aiconfigurator-core model_configs")[0]


@dataclass(frozen=True)
class Case:
    """One measured run, in the terms our simulator and both step models take."""

    row: Row
    spec: ModelSpec
    engine: str
    target: SiliconTarget
    hw: Hardware
    bits: int
    concurrency: int
    isl: int
    osl: int
    ttft_ms: float
    tpot_ms: float

    @property
    def release(self) -> str:
        """The engine release the run used, as the row spells it ('' where it does not say)."""
        return self.row["backend_version"]


def compute_precision(row: Row, arch: str) -> str:
    """The tensor-core precision the row's matmuls run at. FP8 checkpoints run W8A8 on FP8 tensor cores.
    4-bit weights are dequantized to 16 bit for the matmul (weight-only: vLLM's Marlin kernels for INT4
    and, before Blackwell, for MXFP4/NVFP4, vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.py),
    except NVFP4 on Blackwell, whose tensor cores take FP4 (timed here at the FP8 peak, the catalog having
    no FP4 figure)."""
    quant = (row["gemm_quant_mode"] or row["precision"]).lower()
    if BITS.get(row["precision"], 16) == 8:
        return "fp8"
    if "fp4" in quant and arch == "blackwell":
        return "fp8"
    return "bf16"


@cache
def gpus_per_node(system: str) -> int:
    """The system's GPUs per node, from aiconfigurator's own system file (`node.num_gpus_per_node`)."""
    import yaml

    ref = resources.files("aiconfigurator_core") / "systems" / f"{system}.yaml"
    return int(yaml.safe_load(ref.read_text(encoding="utf-8"))["node"]["num_gpus_per_node"])


def engine_parallelism(system: str, tp: int, moe_tp: int, moe_ep: int) -> tuple[int, int]:
    """(attention TP, MoE TP) of the engine run a row records. Some rows (the db-dump source's TP+EP
    runs) give `tp_size` as the product of the engine's TP and EP degrees, so that aiconfigurator's
    `tp * attention_dp == moe_tp * moe_ep` holds, and `moe_tp_size` as the engine's TP: 64 / 8 / 8 for
    an 8-GPU `--tp 8 --ep 8` run, more GPUs than an aggregated run on one node has. Such a row is read
    as what the engine ran: TP `moe_tp` for attention, experts split `moe_ep` ways and not split again."""
    if tp > gpus_per_node(system) and moe_tp > 1 and moe_ep > 1 and tp == moe_tp * moe_ep:
        return moe_tp, 1
    return tp, moe_tp


def attention_dp(row: Row) -> int:
    """The row's attention data-parallel degree. Where the column is blank, aiconfigurator's own invariant
    `tp * attention_dp == moe_tp * moe_ep` gives it. Without --enable-expert-parallel, vLLM's expert layers
    "form a (DP x TP) sized tensor parallel group" (https://docs.vllm.ai/en/v0.12.0/serving/data_parallel_deployment/),
    so a row recording TP 1 with the experts split 2 ways (moe_tp 2) is a two-rank data-parallel run, not
    one GPU holding a 235 GB checkpoint."""
    if row["attention_dp_size"] not in ("", "0"):
        return int(row["attention_dp_size"])
    tp = int(row["tp_size"] or 1)
    experts = int(row["moe_tp_size"] or 0) * int(row["moe_ep_size"] or 1)
    return experts // tp if experts > tp and experts % tp == 0 else 1


def case(row: Row) -> Case | None:
    """The row as a simulation case, or None when it is out of scope: disaggregated serving, attention
    data parallelism (which the advisor does not recommend), a GPU outside our catalog, or a model whose
    config aiconfigurator does not ship."""
    if row["mode"] != "agg" or attention_dp(row) != 1 or row["backend"] not in ENGINES:
        return None
    model_path = aic_model_path(row["model_path"])
    gpu_id, spec = _gpu_for_system().get(row["system"]), _spec(model_path)
    version = nearest_version(row["system"], row["backend"], row["backend_version"])
    if gpu_id is None or spec is None or version is None or not row["silicon_ttft_ms"] or not row["silicon_tpot_ms"]:
        return None
    tp, pp = int(row["tp_size"] or 1), int(row["pp_size"] or 1)
    bits = BITS.get(row["precision"], 16)
    moe_ep = int(row["moe_ep_size"] or 1) or 1
    moe_tp = int(row["moe_tp_size"]) if row["moe_tp_size"] not in ("", "0") else max(1, tp // moe_ep)
    tp, moe_tp = engine_parallelism(row["system"], tp, moe_tp, moe_ep)
    target = SiliconTarget(row["system"], row["backend"], version, model_path, tp, pp,
                           gemm_quant=row["gemm_quant_mode"] or None, moe_quant=row["moe_quant_mode"] or None,
                           moe_tp=moe_tp, moe_ep=moe_ep)
    hw = Hardware.from_gpu(gpus()[gpu_id], compute_precision(row, gpus()[gpu_id].arch), tp, pp)
    return Case(row, spec, ENGINES[row["backend"]], target, hw, bits, int(row["batch_size"]), int(row["isl"]),
                int(row["osl"]), float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"]))


KV_BYTES = 2.0  # the engines' default KV cache dtype, "auto", is the model's 16-bit dtype, whatever the weights'
# (vLLM and SGLang --kv-cache-dtype; aiconfigurator's own default, sdk/models/helpers.py, is bfloat16 too)


def _roofline(c: Case, eff: Efficiency) -> StepModel:
    return StepModel(c.spec, c.hw, c.bits, "fp8" if c.bits == 8 else None, KV_BYTES, eff)


def roofline_step(c: Case, fit: StepFit) -> StepModel:
    """Default roofline efficiencies divided by the fitted scale, plus the fitted per-step costs."""
    return _roofline(c, fit.efficiency())


def silicon_step(c: Case, fit: StepFit) -> SiliconStepModel:
    """aiconfigurator's step times for the row's configuration, or the nearest one it measured (as the
    advisor picks it); raises SiliconUnavailable when there is none."""
    found = nearest_measured(c.target)
    if found is None:
        raise SiliconUnavailable(f"no measurements for {c.target}")
    return SiliconStepModel(found[0], fit.scale, fit.step_overhead_s, fit.per_seq_overhead_s, fit.prefill_scale,
                            fit.moe_floor_s(c.spec))


def simulate(c: Case, step: StepTimes, request_overhead_s: float) -> tuple[float, float]:
    """(mean TTFT ms, mean TPOT ms) of the closed loop the row measured, driven as its client drove it:
    every user starting at once, lengths spread, every request counted."""
    context = c.concurrency * (c.isl + c.osl) * 2  # the measured runs were sized to hold their batch
    cfg = SimConfig(kv_tokens=context, max_num_seqs=c.concurrency, batched_tokens=BATCHED_TOKENS,
                    chunked_prefill=CHUNKED[c.row["backend"]], mixed_steps=MIXED_STEPS[c.row["backend"]])
    out = Simulator(step, cfg, c.isl, c.osl, c.concurrency, num_requests=CLIENT_REQUESTS_PER_USER * c.concurrency,
                    request_overhead_s=request_overhead_s, min_length_ratio=CLIENT_LENGTH_RATIO
                    ).run().summary(include_warm_up=True)
    return out["ttft_mean_ms"], out["tpot_mean_ms"]


def advisor_silicon(c: Case, cal: Calibration) -> tuple[float, float]:
    """What the advisor answers: aiconfigurator step times, or the fitted roofline where aiconfigurator
    cannot build the configuration (missing per-op data for the quantization, say)."""
    fit = cal.engine(c.engine, c.release)
    try:
        return simulate(c, silicon_step(c, fit.silicon), fit.frontend_s(c.concurrency))
    except SiliconUnavailable:
        return advisor_roofline(c, cal)


def advisor_roofline(c: Case, cal: Calibration) -> tuple[float, float]:
    fit = cal.engine(c.engine, c.release)
    return simulate(c, roofline_step(c, fit.roofline), fit.frontend_s(c.concurrency))


def naive_roofline(c: Case, cal: Calibration) -> tuple[float, float]:
    step = _roofline(c, Efficiency())
    ttft = step.step_seconds(c.isl, c.isl / 2, 0, 0.0, prefill_seqs=1)
    tpot = step.step_seconds(0, 0.0, c.concurrency, c.concurrency * (c.isl + c.osl / 2))
    return ttft * 1e3, tpot * 1e3


def aiconfigurator(c: Case, cal: Calibration) -> tuple[float, float]:
    """aiconfigurator's own aggregated-serving estimate for the row (its `run_agg`)."""
    from aiconfigurator_core.sdk import perf_database
    from aiconfigurator_core.sdk.backends.factory import get_backend
    from aiconfigurator_core.sdk.config import RuntimeConfig
    from aiconfigurator_core.sdk.config_builders import build_model_config
    from aiconfigurator_core.sdk.models import get_model

    t = c.target
    config = build_model_config(tp_size=t.tp, pp_size=t.pp, attention_dp_size=1, moe_tp_size=t.moe_tp or 1,
                                moe_ep_size=t.moe_ep or 1, gemm_quant_mode=t.gemm_quant, moe_quant_mode=t.moe_quant)
    model = get_model(t.model_path, config, t.backend)
    database = perf_database.get_database(t.system, t.backend, t.version)
    if database is None:
        raise SiliconUnavailable(f"no database for {t.system} {t.backend} {t.version}")
    result = get_backend(t.backend).run_agg(model, database, RuntimeConfig(batch_size=c.concurrency, isl=c.isl, osl=c.osl),
                                            ctx_tokens=BATCHED_TOKENS).get_result_dict()
    if result is None:
        raise SiliconUnavailable(f"run_agg gave no result for {t}")
    return float(result["ttft"]), float(result["tpot"])


Predictor = Callable[[Case, Calibration], tuple[float, float]]
PREDICTORS: dict[str, Predictor] = {"advisor (aiconfigurator steps, else roofline)": advisor_silicon,
                                    "advisor (roofline fallback)": advisor_roofline,
                                    "aiconfigurator run_agg": aiconfigurator, "naive roofline": naive_roofline}


def sample(rows: list[Row], per_backend: int | None, seed: int = SEED) -> list[Case]:
    """The rows' cases, at most `per_backend` per backend (seeded)."""
    cases = [c for c in map(case, rows) if c is not None]
    if per_backend is None:
        return cases
    out: list[Case] = []
    for backend in ENGINES:
        mine = [c for c in cases if c.row["backend"] == backend]
        random.Random(seed).shuffle(mine)
        out += mine[:per_backend]
    return out


def abs_pct(pred: float, meas: float) -> float:
    return abs(pred - meas) / meas * 100


def evaluate(cases: list[Case], cal: Calibration) -> dict[str, dict[str, float]]:
    """Per predictor: median absolute % error of TTFT and TPOT and how many rows it could answer; then
    the advisor again on just the rows aiconfigurator's own estimate answers, for a like-for-like figure."""
    logging.disable(logging.WARNING)
    answers: dict[str, dict[int, tuple[float, float]]] = {}
    for name, predict in PREDICTORS.items():
        answers[name] = {}
        for i, c in enumerate(cases):
            try:
                p_ttft, p_tpot = predict(c, cal)
            except Exception:  # noqa: BLE001 - an estimator that cannot answer a row is counted, not fatal
                continue
            answers[name][i] = (abs_pct(p_ttft, c.ttft_ms), abs_pct(p_tpot, c.tpot_ms))
    ours, theirs = "advisor (aiconfigurator steps, else roofline)", "aiconfigurator run_agg"
    answers[f"{ours} on {theirs}'s rows"] = {i: answers[ours][i] for i in answers[theirs] if i in answers[ours]}
    return {name: {"rows": len(errs), "ttft_median_pct": percentile([e[0] for e in errs.values()], 50),
                   "tpot_median_pct": percentile([e[1] for e in errs.values()], 50)}
            for name, errs in answers.items()}


def breakdown(cases: list[Case], cal: Calibration) -> list[str]:
    """One line per (model, backend, step source): rows, median signed and absolute % error of TTFT and
    TPOT, largest total TPOT error first, so the class that dominates the error is read off the top."""
    groups: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for c in cases:
        fit = cal.engine(c.engine, c.release)
        try:
            source = "silicon"
            pred = simulate(c, silicon_step(c, fit.silicon), fit.frontend_s(c.concurrency))
        except SiliconUnavailable:
            source = "roofline"
            pred = advisor_roofline(c, cal)
        except Exception:  # noqa: BLE001 - counted as unanswered, as evaluate does
            continue
        key = (c.row["model_path"], c.row["backend"], source)
        groups.setdefault(key, []).append(((pred[0] - c.ttft_ms) / c.ttft_ms * 100, (pred[1] - c.tpot_ms) / c.tpot_ms * 100))
    order = sorted(groups.items(), key=lambda kv: -sum(abs(e[1]) for e in kv[1]))
    return [f"  {m[:40]:40s} {b:7s} {src:8s} n={len(e):3d}  TTFT {percentile([x[0] for x in e], 50):+7.1f} "
            f"(|{percentile([abs(x[0]) for x in e], 50):5.1f}|)  TPOT {percentile([x[1] for x in e], 50):+7.1f} "
            f"(|{percentile([abs(x[1]) for x in e], 50):5.1f}|)" for (m, b, src), e in order]


# --- fitting -----------------------------------------------------------------------------------
STEP_OVERHEADS_S = (0.0, 0.0005, 0.001, 0.002, 0.003, 0.005)
PER_SEQ_OVERHEADS_S = (0.0, 0.00001, 0.00002, 0.00004, 0.00008)
REQUEST_OVERHEADS_S = (0.0, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3)
PER_STREAM_OVERHEADS_S = (0.0, 0.0005, 0.001, 0.002, 0.004, 0.008)
PER_LAYER_OVERHEADS_S = (0.0, 0.00001, 0.00002, 0.00004, 0.00006, 0.00008, 0.00012)  # roofline only
# charged per layer of an MoE model, on top of the roofline's per-layer floor (Efficiency.per_moe_layer_overhead_s)
# and of aiconfigurator's timed MoE ops (SiliconStepModel's moe_floor_s)
PER_MOE_LAYER_OVERHEADS_S = (0.0, 0.00001, 0.00002, 0.00004, 0.00006, 0.00008, 0.00012, 0.00016, 0.0002, 0.00025, 0.0003)


def _median_err(pairs: list[tuple[float, float]]) -> float:
    return percentile([abs_pct(p, m) for p, m in pairs], 50)


def fit_step(cases: list[Case], raw_tpot: list[float], per_layer: tuple[float, ...] = (0.0,),
             per_moe_layer: tuple[float, ...] = (0.0,)) -> StepFit:
    """Scale, per-step, per-sequence (and, given grids, per-layer and per-MoE-layer) costs minimising the
    median TPOT error, given TPOTs simulated unscaled (TPOT is one decode step's time, which moves with
    these directly; the batch is the row's concurrency)."""
    best: tuple[float, StepFit] | None = None
    pairs = [(c, x) for c, x in zip(cases, raw_tpot, strict=True) if x > 0]
    grid = itertools.product(STEP_OVERHEADS_S, PER_SEQ_OVERHEADS_S, per_layer, per_moe_layer)
    for overhead, per_seq, layer, moe in grid:
        fixed = [(overhead + per_seq * c.concurrency + (layer + (moe if c.spec.experts else 0.0)) * c.spec.layers) * 1e3
                 for c, _ in pairs]
        scale = min(20.0, max(0.05, percentile([(c.tpot_ms - f) / x for (c, x), f in zip(pairs, fixed, strict=True)], 50)))
        err = _median_err([(scale * x + f, c.tpot_ms) for (c, x), f in zip(pairs, fixed, strict=True)])
        if best is None or err < best[0]:
            best = (err, StepFit(round(scale, 4), overhead, per_seq, per_layer_overhead_s=layer,
                                 per_moe_layer_overhead_s=moe))
    assert best is not None
    return best[1]


PREFILL_SCALES = (0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0)  # TTFT is linear in it: steps of 1/8 to 1/4


def fit_prefill(cases: list[Case], ttft: list[float], frontend: tuple[float, float] | None = None) -> tuple[float, float, float]:
    """(prefill scale, per-request cost, its share per concurrent stream) minimising the median TTFT
    error, given TTFTs simulated with the prefill unscaled and no frontend cost (TTFT is mostly one
    prompt's prefill plus that cost, so it moves with them about linearly); `frontend` fixes the cost."""
    costs = [frontend] if frontend else [(a, b) for a in REQUEST_OVERHEADS_S for b in PER_STREAM_OVERHEADS_S]
    grid = [(p, a, b) for p in PREFILL_SCALES for a, b in costs]
    return min(grid, key=lambda g: _median_err([(g[0] * t + (g[1] + g[2] * c.concurrency) * 1e3, c.ttft_ms)
                                                for c, t in zip(cases, ttft, strict=True)]))


def _fit_group(cases: list[Case], roofline_too: bool = True) -> dict[str, Any]:
    """Per step model (the roofline's only with `roofline_too`): the decode constants from TPOT, then the
    prefill scale and (fitted where the steps are measured, as it is the engine's own) the frontend cost
    from TTFT."""
    unit = StepFit(1.0, 0.0)
    fits: dict[str, Any] = {"rows": len(cases)}
    kinds: tuple[tuple[str, Callable[[Case, StepFit], StepTimes]], ...] = (
        ("silicon", silicon_step), ("roofline", roofline_step))
    for kind, make in kinds[:2 if roofline_too else 1]:
        usable, raw = [], []
        for c in cases:
            try:
                raw.append(simulate(c, make(c, unit), 0.0)[1])
                usable.append(c)
            except SiliconUnavailable:  # rows aiconfigurator cannot time are left out of its fit
                continue
        roofline = kind == "roofline"
        step = fit_step(usable, raw, PER_LAYER_OVERHEADS_S if roofline else (0.0,), PER_MOE_LAYER_OVERHEADS_S)
        ttft = [simulate(c, make(c, step), 0.0)[0] for c in usable]
        frontend = (fits["request_overhead_s"], fits["per_stream_overhead_s"]) if kind == "roofline" else None
        prefill, overhead, per_stream = fit_prefill(usable, ttft, frontend)
        fits[kind] = {"scale": step.scale, "prefill_scale": prefill, "step_overhead_s": step.step_overhead_s,
                      "per_seq_overhead_s": step.per_seq_overhead_s}
        fits[kind]["per_moe_layer_overhead_s"] = step.per_moe_layer_overhead_s
        if kind == "roofline":
            fits[kind]["per_layer_overhead_s"] = step.per_layer_overhead_s
        fits["request_overhead_s"], fits["per_stream_overhead_s"] = overhead, per_stream
    return fits


# a release number such as 0.16.0 or 1.1.0rc2.post2, not an image tag ("gpt-oss-dev", "nightly-dev-…",
# blank): only a release can be asked of the advisor, and a tag made for one model would only learn that model
RELEASE = re.compile(r"\d+\.\d+(\.\d+)?[.a-z0-9]*")
MIN_RELEASE_ROWS, MIN_RELEASE_MODELS = 12, 2


def fit_releases(cases: list[Case], cal: Calibration) -> dict[str, dict[str, dict[str, float]]]:
    """Per engine, the decode correction of each release with at least MIN_RELEASE_ROWS runs of at least
    MIN_RELEASE_MODELS models among `cases`: the median ratio of measured to estimated TPOT under `cal`
    (the engine's fit, without release corrections). Fewer models and the ratio would be one model's
    quirk charged to the release."""
    ratios: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for c in cases:
        if not RELEASE.fullmatch(c.release):
            continue
        try:
            tpot = advisor_silicon(c, cal)[1]
        except Exception:  # noqa: BLE001 - a row no estimate answers is left out, as evaluate leaves it
            continue
        ratios.setdefault((c.engine, c.release), []).append((c.row["model_path"], c.tpot_ms / tpot))
    fits: dict[str, dict[str, dict[str, float]]] = {}
    for (engine, release), found in sorted(ratios.items()):
        models = {model for model, _ in found}
        if len(found) >= MIN_RELEASE_ROWS and len(models) >= MIN_RELEASE_MODELS:
            fits.setdefault(engine, {})[release] = {"decode": round(percentile([r for _, r in found], 50), 4),
                                                    "rows": len(found), "models": len(models)}
    return fits


def fit(cases: list[Case], rows_note: str, which: str = "all") -> dict[str, Any]:
    """A new calibration document: per engine, and pooled as the default, from `cases`. `which` "silicon"
    keeps each engine's roofline block (the fallback's constants) as the current file has it."""
    doc: dict[str, Any] = json.loads((CATALOG_DIR / "calibration.json").read_text(encoding="utf-8"))
    engines: dict[str, Any] = {}
    for backend, engine in ENGINES.items():
        mine = [c for c in cases if c.row["backend"] == backend]
        if mine:
            engines[engine] = _fit_group(mine, which == "all")
    engines["default"] = {**_fit_group(cases, which == "all"), "rows": 0}
    if which == "silicon":  # the roofline blocks were not refitted: keep the file's
        for engine, fits in engines.items():
            fits["roofline"] = doc["engines"][engine]["roofline"]
    for engine, releases in fit_releases(cases, parse({**doc, "engines": engines})).items():
        engines[engine]["releases"] = releases
    fitted = doc["fitted"]
    doc["engines"] = engines
    doc["fitted"] = {"source": "aiconfigurator-core 0.12.0 systems/silicon_sample.csv (agg rows)",
                     "rows": rows_note, "seed": SEED, "date": datetime.date.today().isoformat(),
                     "command": f"python -m benchmarks.perf_accuracy --fit {which}",
                     "held_out_systems": sorted(HELD_OUT)}
    if which == "silicon":
        doc["fitted"]["roofline_fitted"] = fitted.get("roofline_fitted", fitted["date"])
    parse(doc)
    return doc


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="?", const="all", choices=("all", "silicon"),
                        help="refit advisor/catalog/calibration.json first ('silicon': keep the roofline blocks)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--split", choices=("all", "fit"), default="all",
                        help="'fit': evaluate only the fit half and the other systems, never the validation "
                             "half (what to iterate on; run 'all' once at the end)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also print the advisor's median errors per model and backend (where the error is)")
    args = parser.parse_args(argv)
    sets = split(list(read_rows()))
    if args.fit:
        fit_cases = sample(sets["fit"], SAMPLE["fit"]) + sample(sets["other"], SAMPLE["other"], SEED + 1)
        doc = fit(fit_cases, f"{len(fit_cases)} agg rows: the seeded fit half of h200_sxm and other systems "
                             f"(at most {SAMPLE['fit']} + {SAMPLE['other']} per backend)", args.fit)
        (CATALOG_DIR / "calibration.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    # the new constants, parsed here: calibration() would re-read the catalog's cached copy of the old file
    cal = parse(doc) if args.fit else calibration()
    names = EVALUATED[args.split]
    report = {name: evaluate(sample(sets[name], None if name == "validation" else SAMPLE.get(name)), cal)
              for name in names}
    lines = []
    for name, results in report.items():
        lines.append(f"{name} rows:")
        for predictor, r in results.items():
            lines.append(f"  {predictor:46s} n={r['rows']:4.0f}  TTFT {r['ttft_median_pct']:6.1f} %  "
                         f"TPOT {r['tpot_median_pct']:6.1f} %")
    if args.breakdown:
        for name in names:
            if name != "validation":
                lines += [f"{name} rows by model / backend (advisor):", *breakdown(sample(sets[name], SAMPLE.get(name)), cal)]
    print(json.dumps(report, indent=2) if args.json else "\n".join(lines))
    return report


if __name__ == "__main__":
    main()

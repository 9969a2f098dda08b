"""The benchmark runs end to end (on a tiny model: this checks the plumbing and the reported fields, not speed)."""

from __future__ import annotations

import json

import pytest
import torch

from inference import SamplingParams, bench
from inference.bench import (
    Request,
    engine_over_http,
    llama_cpp_anchor,
    llama_server_anchor,
    main,
    random_model,
    run_engine,
)
from inference.config import Config
from inference.engine import LLMEngine

from .conftest import build_tiny

TINY_DIMS = dict(vocab_size=300, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=256, rope_theta=1e6, rms_norm_eps=1e-6,
                 tie_word_embeddings=False)


@pytest.mark.slow
@pytest.mark.parametrize("quantization", ["none", "int8"])
def test_bench_reports_every_figure_for_the_engine_and_its_anchors(tmp_path, capsys, quantization):
    folder = build_tiny(tmp_path / "tiny", "qwen2")
    int8 = quantization == "int8"
    flags = ["--no-fused-decode"] if int8 else []  # one run on each decode path
    assert main(["--model", str(folder), "--requests", "2", "--quantization", quantization, "--json", *flags]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["requests"] == 2 and report["useful_output_tokens"] >= 2 * 16
    assert report["decode_path"] == ("python layers (fused_decode=False)" if int8 else "compiled C++ layer loop")
    assert report["weights"] == ("int8 weights, float32 activations" if int8 else report["dtype"])
    equal_arithmetic = ("engine_dense", "batch1_dense", "hf_static_batch_int8")
    for key in ("engine", "hf_static_batch", "hf_one_at_a_time", *(equal_arithmetic if int8 else ())):
        assert report[key]["tok_s" if "batch1" not in key else "decode_tok_s"] > 0
    assert int8 or not set(equal_arithmetic) & set(report)
    assert 0 <= report["engine"]["kv_waste_pct"] < 100
    for figures in (report["engine"], report["hf_static_batch"], report["hf_one_at_a_time"], report["batch1"]):
        assert 0 <= figures["cpu_steal_pct"] <= 100  # /proc/stat's steal share while that run ran (Linux)
    ratios = report["static_batch_ratios"]  # the reported pair is the round with the median ratio
    assert len(ratios) == 3
    assert report["engine"]["tok_s"] / report["hf_static_batch"]["tok_s"] == pytest.approx(sorted(ratios)[1])
    assert report["batch1"]["share_of_bound"] > 0 and report["batch1"]["weight_bytes_per_token"] > 0
    b = report["batch1"]  # the share is the reported round's own speed over its own bound
    assert b["rounds"] == 3 and b["share_of_bound"] == pytest.approx(b["decode_tok_s"] / b["bound_tok_s"])
    if int8:  # a quarter of the float32 bytes per weight (plus a scale per row)
        assert report["batch1"]["weight_bytes_per_token"] < 0.3 * report["batch1_dense"]["weight_bytes_per_token"]
    assert report["llama_cpp_one_at_a_time"] is None  # the tiny model is a HF folder, which llama.cpp cannot read
    assert report["llama_cpp_skipped"] == "llama.cpp reads GGUF files, not a Hugging Face folder"


def test_random_model_shares_its_weights_with_the_transformers_anchor():
    loaded, hf = random_model(TINY_DIMS, torch.float32, "cpu", "random-tiny")
    engine = LLMEngine(Config(dtype="float32", max_model_len=256), loaded)
    engine.runner.keep_logits = True
    seq = engine.add_request([3, 1, 4, 1, 5, 9, 2, 6], SamplingParams(max_tokens=1, temperature=0))
    while engine.has_unfinished():
        engine.step()
    with torch.no_grad():
        ref = hf(torch.tensor([seq.token_ids[:8]])).logits[0, -1]
    assert torch.allclose(engine.runner.kept_logits[seq.seq_id][0], ref, atol=1e-4)


def test_a_crash_inside_llama_cpp_costs_that_anchor_not_the_run(tmp_path, monkeypatch):
    """llama.cpp's AMX kernels segfault on some Sapphire Rapids VMs (llama.cpp#20824); the anchor runs in a
    child process, so the crash becomes a reason. The stand-in module aborts its process as that crash did."""
    (tmp_path / "llama_cpp").mkdir()
    (tmp_path / "llama_cpp" / "__init__.py").write_text(
        "import os\n\n\nclass Llama:\n    def __init__(self, **kwargs):\n        os.abort()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    figures, why = llama_cpp_anchor(gguf, [Request([1, 2, 3], 4)])
    assert figures is None
    assert why.startswith("llama.cpp crashed")


def test_each_engine_run_starts_from_a_cold_prefix_cache(tmp_path):
    """A repeated workload must not be served from the previous run's K/V: the bench compares runs."""
    engine = LLMEngine(Config(model=str(build_tiny(tmp_path / "tiny", "qwen2")), dtype="float32", max_model_len=256))
    reqs = [Request(list(range(3, 3 + 40)), 4)]
    run_engine(engine, reqs)
    run_engine(engine, reqs)
    assert engine.block_manager.prefix_hits == 0


def test_a_second_engine_on_the_same_loaded_model_is_refused():
    """Each engine binds its own KV cache into the model's layers. A second engine on the same model
    re-pointed them under the first one's block tables, and the first engine's next decode step read
    past its cache (a segfault in the compiled loop); the bench is where two engines meet."""
    loaded, _ = random_model(TINY_DIMS, torch.float32, "cpu", "random-tiny")
    first = LLMEngine(Config(dtype="float32", max_model_len=256, block_size=16), loaded)
    with pytest.raises(ValueError, match="already serves another LLMEngine"):
        LLMEngine(Config(dtype="float32", max_model_len=256, block_size=8), loaded)
    seq = first.add_request([3, 1, 4, 1, 5], SamplingParams(max_tokens=3, temperature=0, ignore_eos=True))
    while first.has_unfinished():
        first.step()
    assert seq.num_completion_tokens == 3


def test_steal_is_the_hypervisors_share_of_all_cpu_time_between_two_readings(monkeypatch):
    readings = iter([[100, 0, 20, 500, 0, 0, 0, 30], [180, 0, 30, 520, 0, 0, 0, 70]])  # steal is the 8th counter
    monkeypatch.setattr(bench, "cpu_ticks", lambda: next(readings))
    figures = bench.with_steal(lambda: {"tok_s": 1.0})
    assert figures == {"tok_s": 1.0, "cpu_steal_pct": pytest.approx(100 * 40 / 150)}


def test_cpu_ticks_reads_the_eight_counters_of_proc_stat():
    ticks = bench.cpu_ticks()
    assert ticks is not None and len(ticks) == 8 and sum(ticks) > 0


def test_this_engine_over_http_produces_every_requested_token(tiny_chat_model):
    """A model with a real tokenizer, so the streamed chunks carry text whose arrival TTFT and TPOT time."""
    engine = LLMEngine(Config(model=str(tiny_chat_model), dtype="float32", max_model_len=256))
    reqs = [Request(list(range(3, 20)), 5), Request(list(range(7, 40)), 9)]
    figures = engine_over_http(engine, reqs)
    assert figures["useful_tokens"] == 14 and figures["tok_s"] > 0
    # streamed: each request's first token came before the run ended, and later tokens took time
    assert 0 < figures["ttft_s_p50"] <= figures["ttft_s_p99"] <= figures["seconds"]
    assert 0 < figures["tpot_s_p50"] <= figures["tpot_s_p99"]
    one_at_a_time = engine_over_http(engine, reqs, concurrency=1)
    assert one_at_a_time["useful_tokens"] == 14


def test_percentiles_take_the_nearest_rank():
    assert bench.percentiles([4.0, 1.0, 3.0, 2.0, 5.0], "x") == {"x_p50": 3.0, "x_p90": 5.0, "x_p99": 5.0}
    assert bench.percentiles([], "x") == {}


def test_the_llama_server_anchor_says_why_it_did_not_run(tmp_path, monkeypatch):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.delenv("LLAMA_SERVER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no llama-server here
    assert llama_server_anchor(None, gguf, [], threads=1) == (None, "no llama-server binary (put it on PATH or name it in "
                                                         "$LLAMA_SERVER)")
    monkeypatch.setenv("LLAMA_SERVER", "/bin/false")  # a binary that exits at once, as a bad build would
    figures, why = llama_server_anchor(None, gguf, [Request([1, 2, 3], 4)], threads=1)
    assert figures is None and why.startswith("llama-server failed: llama-server exited with 1")


def test_infrawiki_device_names_the_default_device_of_every_engine(monkeypatch):
    monkeypatch.setenv("INFRAWIKI_DEVICE", "tpu")
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda"):
        Config()
    monkeypatch.setenv("INFRAWIKI_DEVICE", "cpu")
    assert Config().device == "cpu"

"""gpt-oss and MiniMax-M2.5 answered offline from aiconfigurator-core's bundled config.json: MXFP4 experts at
4.25 bits with the modules the checkpoint leaves unconverted in bf16, vLLM's mxfp4 loader, and KV per token from
the config's GQA heads and its sliding-window layers. The Hub is a closed port here (tests/advisor/conftest.py).

Model-card figures: "post-trained with MXFP4 quantization of the MoE weights, making gpt-oss-120b run on a single
80GB GPU ... and the gpt-oss-20b model run within 16GB of memory" (https://huggingface.co/openai/gpt-oss-120b);
"the weights are quantized to 4.25 bits per parameter" (the model card, https://arxiv.org/abs/2508.10925)."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from advisor import memory_accounting
from advisor.catalog import gpus
from advisor.local_models import bundled_config
from advisor.model_specs import spec_from_config
from advisor.perf import Hardware, StepModel
from advisor.planner import enumerate_options
from advisor.sizing import GIB, kv_bytes_per_token, weight_bytes
from advisor.validation import parse_request
from benchmarks.memory_model import logs, size, split_of

pytestmark = pytest.mark.django_db
H100 = "NVIDIA H100 80GB HBM3"


def _config(model_id: str) -> dict:
    found = bundled_config(model_id)
    assert found is not None, f"aiconfigurator-core ships no config for {model_id}"
    return found[0]


def _mxfp4_bytes(c: dict) -> float:
    """The checkpoint by hand: experts (gate, up, down) at 4 bits plus one 8-bit scale per 32 values; attention,
    router, embeddings and LM head in bf16, as its quantization_config's modules_to_not_convert says."""
    h, layers, experts = c["hidden_size"], c["num_hidden_layers"], c["num_local_experts"]
    expert_params = layers * experts * 3 * h * c["intermediate_size"]
    attention = layers * (h * c["num_attention_heads"] * c["head_dim"] * 2 + h * c["num_key_value_heads"] * c["head_dim"] * 2)
    router = layers * h * experts
    embeddings = c["vocab_size"] * h * 2
    return expert_params * (4 + 8 / 32) / 8 + (attention + router + embeddings) * 2


@pytest.mark.parametrize(("model_id", "card_gb"), [("openai/gpt-oss-120b", 80), ("openai/gpt-oss-20b", 16)])
def test_gpt_oss_is_sized_offline_with_mxfp4_experts_and_bf16_attention(model_id, card_gb):
    config = _config(model_id)
    req = parse_request({"gpu": H100, "model": model_id})
    assert (req.model.quantization, req.model.experts) == ("mxfp4", config["num_local_experts"])
    weights = weight_bytes(req.model, req.model.weight_bits, req.model.quantization)
    assert weights == pytest.approx(_mxfp4_bytes(config), rel=1e-9)
    assert weights < card_gb * 1e9  # the card: one 80 GB GPU for 120b, within 16 GB for 20b
    if model_id.endswith("120b"):
        assert 60 <= weights / GIB <= 65


def test_the_checkpoints_unconverted_modules_decide_what_stays_in_bf16():
    config = _config("openai/gpt-oss-120b")
    bare = json.loads(json.dumps(config))
    del bare["quantization_config"]["modules_to_not_convert"]
    kept, _ = spec_from_config("x/kept", config, {}, "test")
    packed, _ = spec_from_config("x/packed", bare, {}, "test")
    h, hd = config["hidden_size"], config["head_dim"]
    attention_and_router = config["num_hidden_layers"] * (
        h * config["num_attention_heads"] * hd * 2 + h * config["num_key_value_heads"] * hd * 2 + h * config["num_local_experts"])
    assert kept.unquantized_params == attention_and_router and packed.unquantized_params == 0
    gap = weight_bytes(kept, 4, "mxfp4") - weight_bytes(packed, 4, "mxfp4")
    assert gap == pytest.approx(attention_and_router * (16 - 4.25) / 8)


def test_vllm_serves_gpt_oss_120b_on_one_h100_and_no_mxfp4_kernels_before_ampere():
    plan = enumerate_options(parse_request({"gpu": H100, "model": "openai/gpt-oss-120b", "engine": "vllm"}))
    fitting = [o for o in plan.options if o.plan.fits]
    assert fitting and {o.quant.method for o in fitting} == {"mxfp4"} and {o.tp for o in fitting} == {1}
    old = enumerate_options(parse_request({"gpu": H100, "model": "openai/gpt-oss-20b", "engine": "vllm", "engine_version": "0.10.0"}))
    assert not old.options and "supported from vLLM 0.10.1" in old.log.rejections["vllm 0.10.0"].reason
    t4 = enumerate_options(parse_request({"gpu": "Tesla T4", "model": "openai/gpt-oss-20b", "engine": "vllm"}))
    assert not t4.options and "needs sm80+" in t4.log.rejections["vllm mxfp4"].reason


def test_sglang_loads_the_mxfp4_checkpoint_from_its_day_0_release_and_not_before():
    new = enumerate_options(parse_request({"gpu": H100, "model": "openai/gpt-oss-120b", "engine": "sglang"}))
    assert any(o.plan.fits and o.quant.method == "mxfp4" for o in new.options)
    old = enumerate_options(parse_request({"gpu": H100, "model": "openai/gpt-oss-120b", "engine": "sglang",
                                           "engine_version": "0.4.9.post2"}))
    assert not old.options and "supported from SGLang 0.5.0" in old.log.rejections["sglang 0.4.9.post2"].reason


def test_tensorrt_llm_runs_mxfp4_moe_on_hopper_and_later_only():
    h100 = enumerate_options(parse_request({"gpu": H100, "model": "openai/gpt-oss-20b", "engine": "tensorrt-llm"}))
    assert any(o.plan.fits and o.quant.method == "mxfp4" for o in h100.options)
    a100 = enumerate_options(parse_request({"gpu": "NVIDIA A100-SXM4-80GB", "model": "openai/gpt-oss-20b", "engine": "tensorrt-llm"}))
    assert not a100.options and "needs sm90+" in a100.log.rejections["tensorrt-llm mxfp4"].reason


def test_gpt_oss_kv_per_token_is_gqa_and_its_sliding_layers_hold_only_the_window():
    config = _config("openai/gpt-oss-120b")
    model = parse_request({"gpu": H100, "model": "openai/gpt-oss-120b"}).model
    layers, window = config["num_hidden_layers"], config["sliding_window"]
    sliding = config["layer_types"].count("sliding_attention")
    assert (model.sliding_layers, model.sliding_window) == (sliding, window) == (18, 128)
    per_layer = 2 * config["num_key_value_heads"] * config["head_dim"] * 2  # K and V, 8 KV heads x 64, bf16
    assert kv_bytes_per_token(model, 2) == layers * per_layer == 73728  # every layer keeps every token
    seq = 16384
    assert kv_bytes_per_token(model, 2, seq_len=seq) == pytest.approx(((layers - sliding) + sliding * window / seq) * per_layer)
    assert kv_bytes_per_token(model, 2, seq_len=window) == layers * per_layer  # a short sequence fits in the window
    assert kv_bytes_per_token(model, 2, tp=8, seq_len=seq) == pytest.approx(kv_bytes_per_token(model, 2, seq_len=seq) / 8)


def test_a_decode_step_reads_only_the_window_of_each_sequence_on_sliding_layers():
    model = parse_request({"gpu": H100, "model": "openai/gpt-oss-120b"}).model
    hw = Hardware.from_gpu(gpus()["h100-sxm5-80gb"], "bf16", 1, 1)
    sliding = StepModel(model, hw, 4, "mxfp4", 2.0)
    every_layer = StepModel(replace(model, sliding_layers=0), hw, 4, "mxfp4", 2.0)
    seqs, length = 64, 32768
    long_step, long_full = (s.step_seconds(0, 0.0, seqs, seqs * length) for s in (sliding, every_layer))
    assert long_step < long_full  # 18 of 36 layers read 128 tokens, not 32768
    short = [s.step_seconds(0, 0.0, seqs, seqs * 100) for s in (sliding, every_layer)]
    assert short[0] == short[1]  # sequences inside the window read the same either way


def test_only_a_release_whose_kv_manager_frees_the_window_sizes_sliding_layers_by_it():
    assert memory_accounting.line("vllm", "0.12.0").window_kv and not memory_accounting.line("vllm", "0.11.0").window_kv
    request = {"gpu": H100, "model": "openai/gpt-oss-120b", "engine": "vllm", "workload": {"prompt_tokens": 8192, "output_tokens": 1024}}
    new = enumerate_options(parse_request({**request, "engine_version": "0.12.0"})).options[0].plan
    old = enumerate_options(parse_request({**request, "engine_version": "0.11.0"})).options[0].plan
    assert new.kv_bytes_per_token < old.kv_bytes_per_token == 73728


def test_minimax_m25_is_full_attention_moe_in_fp8_and_fits_four_h100s():
    config = _config("MiniMaxAI/MiniMax-M2.5")
    req = parse_request({"gpu": H100, "gpu_count": 4, "model": "MiniMaxAI/MiniMax-M2.5"})
    model = req.model
    assert (model.quantization, model.experts, model.sliding_layers) == ("fp8", config["num_local_experts"], 0)
    # 62 layers x 8 KV heads x 128 x K and V x 2 bytes: every layer attends to the whole sequence
    assert kv_bytes_per_token(model, 2, seq_len=100_000) == 2 * 62 * 8 * 128 * 2 == 253952
    assert 200 < weight_bytes(model, 8, "fp8") / GIB < 230  # ~229B parameters at one byte
    fitting = [o for o in enumerate_options(req).options if o.plan.fits]
    assert fitting and min(o.tp * o.pp for o in fitting) == 4


def test_the_gpt_oss_dev_memory_rows_are_sized_instead_of_refused():
    rows = [size(e) for e in logs() if "gpt-oss" in e["id"] and split_of(e["source"]) == "dev"]
    assert len(rows) == 2
    assert all(r.advisor > 0 and r.error(r.advisor) < r.error(r.naive) for r in rows), [(r.id, r.advisor, r.observed) for r in rows]

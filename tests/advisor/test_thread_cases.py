"""Real issue threads the advisor used to answer wrong, each answered as the thread was resolved.

sglang#1362 (SGLang 0.3.0, Llama-3.1-405B-FP8 on 8 x H100), vLLM #6689 (the same model on 8 x A100-80GB
with vLLM 0.5.3.post1 needed a lower max_model_len), TGI #2037 (Gemma 2 does not run on a T4) and
vLLM #17469 (Qwen3-30B-A3B on 4 x A10 with vLLM 0.8.5 ran only with enforce_eager)."""
from __future__ import annotations

import pytest

from advisor.services import recommend
from advisor.validation import parse_request

FP8_405B = "meta-llama/Llama-3.1-405B-Instruct-FP8"


def test_sglang_0_3_0_serves_llama_405b_fp8_on_eight_h100_with_tensor_parallelism_8():
    out = recommend({"gpu": "H100-SXM5-80GB", "gpu_count": 8, "model": FP8_405B, "engine": "sglang",
                     "engine_version": "0.3.0"})
    top = out["recommendations"][0]
    assert (top["engine_version"], top["tensor_parallel_size"], top["quantization"]) == ("0.3.0", 8, "fp8")
    assert "--tp 8" in top["command"] and not any("not in the catalog" in w for w in out["warnings"])


@pytest.mark.parametrize("version", ["0.5.1", "0.5.3", "0.5.4", "0.5.8"])
def test_sglang_releases_0_5_1_to_0_5_8_are_answered_from_the_nearest_earlier_catalogued_release(version):
    req = parse_request({"gpu": "H100-SXM5-80GB", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "sglang",
                         "engine_version": version})
    assert req.engine_version == version and any("nearest earlier" in w for w in req.warnings)


def test_without_chunked_prefill_405b_fp8_on_eight_a100_lowers_max_model_len_to_what_the_kv_pool_holds():
    out = recommend({"gpu": "A100-SXM4-80GB", "gpu_count": 8, "model": FP8_405B, "engine": "vllm",
                     "engine_version": "0.5.3.post1", "flags": {"enable_chunked_prefill": False}})
    top = out["recommendations"][0]
    length = top["flags"]["max_model_len"]
    assert 1280 <= length < 131072 and top["estimates"]["kv_tokens"] >= length
    line = next(r for r in top["rationale"] if r.startswith("max_model_len lowered"))
    assert f"to {length}" in line and "6689" in line


def test_a_fixed_max_model_len_is_kept_rather_than_lowered():
    out = recommend({"gpu": "A100-SXM4-80GB", "gpu_count": 8, "model": FP8_405B, "engine": "vllm",
                     "engine_version": "0.5.3.post1", "flags": {"enable_chunked_prefill": False, "max_model_len": 131072}})
    assert out["feasible"] is False


def test_tgi_refuses_gemma2_on_a_t4_because_soft_capping_needs_flash_attention_2():
    out = recommend({"gpu": "Tesla T4", "model": "google/gemma-2-9b-it", "engine": "tgi"})
    assert out["feasible"] is False
    reasons = [r for r in out["rejected"] if r["option"].startswith("tgi ")]
    assert reasons and all("soft-capping" in r["reason"] and "issues/2037" in r["source"] for r in reasons)


def test_tgi_serves_gemma2_on_an_ampere_gpu_that_has_flash_attention_2():
    out = recommend({"gpu": "NVIDIA A10", "model": "google/gemma-2-9b-it", "engine": "tgi"})
    assert out["feasible"] is True


def test_a_moe_model_on_24_gb_gpus_runs_eagerly_and_says_why():
    out = recommend({"gpu": "NVIDIA A10", "gpu_count": 4, "model": "Qwen/Qwen3-30B-A3B", "engine": "vllm",
                     "engine_version": "0.8.5"})
    top = out["recommendations"][0]
    assert top["flags"]["enforce_eager"] is True and "--enforce-eager" in top["command"]
    assert any("17469" in r for r in top["rationale"])


def test_a_dense_model_on_the_same_24_gb_gpu_keeps_cuda_graphs():
    out = recommend({"gpu": "NVIDIA A10", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                     "engine_version": "0.8.5"})
    assert out["recommendations"][0]["flags"]["enforce_eager"] is False


def test_a_moe_model_on_80_gb_gpus_keeps_cuda_graphs():
    out = recommend({"gpu": "A100-SXM4-80GB", "gpu_count": 2, "model": "Qwen/Qwen3-30B-A3B", "engine": "vllm",
                     "engine_version": "0.8.5"})
    assert out["recommendations"][0]["flags"]["enforce_eager"] is False


@pytest.mark.parametrize(("version", "eager", "sizes"), [
    ("0.8.5", True, None),  # no capture-size flag yet: eager is the only way
    ("0.9.0", False, 128),  # --cuda-graph-sizes (vLLM #17201) saves 1-2 GiB: enough for the 3 GiB graphs
    ("0.21.0", False, None),  # graph memory is profiled inside gpu_memory_utilization from 0.21.0
])
def test_moe_graphs_on_24_gb_use_the_cheapest_fix_each_release_has(version, eager, sizes):
    out = recommend({"gpu": "NVIDIA A10", "gpu_count": 4, "model": "Qwen/Qwen3-30B-A3B", "engine": "vllm",
                     "engine_version": version})
    flags = out["recommendations"][0]["flags"]
    assert flags["enforce_eager"] is eager and flags.get("cuda_graph_sizes") == sizes


def test_a_kv_pool_smaller_than_one_full_sequence_lowers_max_model_len_and_shows_the_numbers():
    out = recommend({"gpu": "NVIDIA L4", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                     "engine_version": "0.5.3.post1"})
    top = out["recommendations"][0]
    length, kv_tokens = top["flags"]["max_model_len"], top["estimates"]["kv_tokens"]
    assert length <= kv_tokens < 131072
    line = next(r for r in top["rationale"] if r.startswith(f"max_model_len {length}"))
    assert f"holds {kv_tokens} tokens" in line and "less than one 131072-token sequence" in line

"""A choice the user pinned that the hardware cannot run: the answer's first action is the flag that fixes
it (a dtype, quantization, KV-cache dtype or tensor-parallel size this GPU and model allow), ahead of any
change to the host such as a driver upgrade."""
from __future__ import annotations

from advisor.services import recommend

LLAMA2 = "meta-llama/Llama-2-7b-hf"


def test_a_pinned_bf16_on_a_v100_offers_dtype_half_before_any_driver_upgrade():
    out = recommend({"gpu": "Tesla V100-SXM2-32GB", "model": LLAMA2, "engine": "vllm", "cuda": "11.2",
                     "flags": {"dtype": "bfloat16"}})
    assert out["actions"][0].startswith("set dtype=half")
    assert any(a.startswith("upgrade the NVIDIA driver") for a in out["actions"][1:])


def test_a_pinned_fp8_kv_cache_on_ampere_in_tensorrt_llm_offers_kv_cache_dtype_auto():
    out = recommend({"gpu": "A100-SXM4-40GB", "model": LLAMA2, "engine": "tensorrt-llm",
                     "flags": {"kv_cache_dtype": "fp8"}})
    assert out["feasible"] is False and out["actions"][0].startswith("set kv_cache_dtype=auto")
    fixed = recommend({"gpu": "A100-SXM4-40GB", "model": LLAMA2, "engine": "tensorrt-llm",
                       "flags": {"kv_cache_dtype": "auto"}})
    assert fixed["feasible"] is True


def test_a_pinned_fp8_quantization_on_ampere_offers_the_methods_this_gpu_runs():
    out = recommend({"gpu": "A100-SXM4-40GB", "model": LLAMA2, "engine": "vllm", "engine_version": "0.6.3",
                     "flags": {"quantization": "fp8"}})
    first = out["actions"][0]
    assert out["feasible"] is False and first.startswith("set quantization to one that vLLM 0.6.3 runs")
    assert "awq" in first and "gptq" in first and "fp8," not in first


def test_a_pinned_tensor_parallel_size_that_does_not_divide_the_heads_offers_ones_that_do():
    out = recommend({"gpu": "A100-SXM4-80GB", "gpu_count": 6, "model": LLAMA2, "engine": "vllm",
                     "flags": {"tensor_parallel_size": 3}})
    assert out["feasible"] is False and out["actions"][0].endswith("instead of the pinned 3: 1, 2")

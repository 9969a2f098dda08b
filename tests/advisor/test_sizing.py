"""Memory sizing against published numbers: weights, GQA-aware KV per token, vLLM's KV budget."""
from __future__ import annotations

import pytest

from advisor import memory_accounting
from advisor.catalog import gpus
from advisor.model_specs import resolve_model
from advisor.sizing import GIB, kv_bytes_per_token, plan_memory, weight_bytes


def model(model_id):
    return resolve_model(model_id)[0]


def test_llama2_7b_fp16_weights_take_12_55_gib():
    assert weight_bytes(model("meta-llama/Llama-2-7b-hf"), 16, None) / GIB == pytest.approx(12.55, abs=0.01)


def test_llama31_8b_bf16_weights_match_vllms_log():
    # vLLM prints "model weights take 14.99GiB" for Llama-3.1-8B
    assert weight_bytes(model("meta-llama/Llama-3.1-8B-Instruct"), 16, None) / GIB == pytest.approx(14.99, abs=0.05)


def test_int4_weights_keep_embeddings_in_16_bit_and_pay_for_group_scales():
    m = model("meta-llama/Llama-2-70b-hf")
    awq = weight_bytes(m, 4, "awq")
    assert m.linear_params * 0.5 < awq < m.linear_params * 0.5 + m.embedding_params * 2 + m.linear_params * 0.03


@pytest.mark.parametrize("model_id, kib", [
    ("meta-llama/Llama-2-7b-hf", 512), ("meta-llama/Llama-3.1-8B-Instruct", 128), ("meta-llama/Llama-2-70b-hf", 320),
])
def test_kv_per_token_is_gqa_aware(model_id, kib):
    assert kv_bytes_per_token(model(model_id), 2) / 1024 == kib


def test_kv_per_token_halves_with_fp8_and_splits_under_tensor_parallelism():
    m = model("meta-llama/Llama-2-70b-hf")
    assert kv_bytes_per_token(m, 1) == kv_bytes_per_token(m, 2) / 2
    assert kv_bytes_per_token(m, 2, tp=8) == kv_bytes_per_token(m, 2) / 8
    # fewer KV heads than GPUs: each GPU still keeps one head
    assert kv_bytes_per_token(m, 2, tp=16) == kv_bytes_per_token(m, 2, tp=8)


def test_mla_caches_one_latent_per_token_and_layer():
    m = model("deepseek-ai/DeepSeek-V3")
    assert kv_bytes_per_token(m, 2) == 61 * (512 + 64) * 2
    assert kv_bytes_per_token(m, 2, tp=8) == kv_bytes_per_token(m, 2)


def _plan(model_id, gpu_id, **kw):
    args = dict(bits=16, method=None, kv_bytes=2, tp=1, pp=1, utilization=0.9, wanted_len=131072, required_len=1280,
                fixed_len=None, max_num_seqs=256, batched_tokens=512, acct=memory_accounting.line("vllm", "0.6.3"))
    args.update(kw)
    return plan_memory(model(model_id), gpus()[gpu_id], **args)


def test_kv_budget_matches_a_published_vllm_log_on_an_a10g():
    # "model weights take 14.99GiB; ... activation peak memory takes 0.22GiB; the rest ... for KV Cache is 4.60GiB"
    plan = _plan("meta-llama/Llama-3.1-8B-Instruct", "a10g")
    assert plan.fits
    assert plan.kv_cache_gib == pytest.approx(4.60, rel=0.05)
    assert plan.activation_gib == pytest.approx(0.22, abs=0.1)
    assert plan.max_model_len <= plan.kv_tokens < 131072


def test_a_model_too_large_for_the_budget_does_not_fit_and_says_why():
    plan = _plan("mistralai/Mixtral-8x7B-Instruct-v0.1", "rtx-4090", tp=4, batched_tokens=2048)
    assert not plan.fits and "exceed" in plan.reason


def test_a_user_fixed_max_model_len_beyond_the_cache_is_reported():
    plan = _plan("meta-llama/Llama-3.1-8B-Instruct", "l4", fixed_len=131072)
    assert not plan.fits and "max_model_len=131072" in plan.reason


def test_without_chunked_prefill_the_profiling_batch_grows_with_the_context():
    chunked = _plan("meta-llama/Llama-3.1-8B-Instruct", "a100-sxm4-80gb", wanted_len=8192)
    whole = _plan("meta-llama/Llama-3.1-8B-Instruct", "a100-sxm4-80gb", wanted_len=8192, batched_tokens=None)
    assert whole.activation_gib > chunked.activation_gib
    # the model's hand calibration point (advisor/sizing.py's docstring: a 1.19 GiB log whose GPU and source are unverified)
    assert whole.activation_gib == pytest.approx(1.19, abs=0.25)


def test_a_fraction_of_free_memory_leaves_more_kv_than_the_same_fraction_of_the_gpu():
    whole = _plan("meta-llama/Llama-3.1-8B-Instruct", "a100-sxm4-40gb")
    free = _plan("meta-llama/Llama-3.1-8B-Instruct", "a100-sxm4-40gb", fraction_of_free=True)
    assert free.kv_cache_gib > whole.kv_cache_gib
    # TensorRT-LLM: 90% of what the weights and activations leave
    leftover = 39.39 - free.weights_gib - free.activation_gib - 0.2
    assert free.kv_cache_gib == pytest.approx(0.9 * leftover, rel=0.01)

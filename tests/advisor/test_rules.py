"""Hard compatibility rules, one family per test: each rejects with a reason and a source."""
from __future__ import annotations

import json

import pytest

from advisor.catalog import gpus
from advisor.model_specs import resolve_model
from advisor.profiles import ENGINES_DIR, ProfileError, load_profile, profile
from advisor.rules import (
    QuantChoice,
    RuleLog,
    attention_env,
    attention_flags,
    choose_version,
    dtype_choices,
    engine_supports_gpu,
    kernel_for,
    kv_choices,
    layouts,
    quant_choices,
)
from advisor.validation import parse_request


def model(model_id):
    return resolve_model(model_id)[0]


def test_bf16_is_rejected_below_sm80_and_float16_served_instead():
    log = RuleLog()
    assert dtype_choices(profile("vllm"), gpus()["v100-sxm2-32gb"], model("meta-llama/Llama-3.1-8B-Instruct"), {}, log) == ["float16"]
    rejection = log.rejections["bf16"]
    assert "sm70" in rejection.reason and rejection.source.startswith("https://")
    assert dtype_choices(profile("vllm"), gpus()["a100-sxm4-40gb"], model("meta-llama/Llama-3.1-8B-Instruct"), {}, RuleLog()) == ["bfloat16"]


def test_a_user_forced_bf16_on_a_t4_leaves_no_dtype():
    log = RuleLog()
    assert dtype_choices(profile("vllm"), gpus()["t4"], model("meta-llama/Llama-2-7b-hf"), {"dtype": "bfloat16"}, log) == []
    assert "bf16" in log.rejections


def test_engine_minimum_compute_capability():
    log = RuleLog()
    assert not engine_supports_gpu(profile("vllm"), gpus()["p100-pcie-16gb"], log)
    assert not engine_supports_gpu(profile("tensorrt-llm"), gpus()["v100-sxm2-32gb"], log)
    assert engine_supports_gpu(profile("llama.cpp"), gpus()["p100-pcie-16gb"], log)
    assert set(log.rejections) == {"vllm", "tensorrt-llm"}


def _quants(eid, version, gpu_id, model_id, flags=None):
    log = RuleLog()
    out = quant_choices(profile(eid), version, gpus()[gpu_id], model(model_id), flags or {}, log)
    return {q.label for q in out}, log


def test_awq_kernels_need_sm75_and_gptq_runs_on_volta():
    labels, log = _quants("vllm", "0.6.3", "v100-sxm2-32gb", "meta-llama/Llama-2-7b-hf")
    assert "awq" not in labels and "gptq" in labels
    assert "sm75" in log.rejections["vllm awq"].reason


def test_fp8_compute_needs_sm89():
    trt, log = _quants("tensorrt-llm", "0.18.2", "a100-sxm4-40gb", "meta-llama/Llama-2-7b-hf")
    assert "fp8" not in trt and "sm89" in log.rejections["tensorrt-llm fp8"].reason
    vllm, log = _quants("vllm", "0.6.3", "a100-sxm4-40gb", "meta-llama/Llama-2-7b-hf")
    assert "fp8" not in vllm and "sm89" in log.rejections["vllm fp8"].reason
    ada = quant_choices(profile("vllm"), "0.6.3", gpus()["l4"], model("meta-llama/Llama-2-7b-hf"), {}, RuleLog())
    assert any(q.label == "fp8" and q.compute == "fp8" for q in ada)


def test_an_fp8_checkpoint_the_user_asks_for_runs_weight_only_on_ampere_in_later_vllm():
    log = RuleLog()
    v3 = quant_choices(profile("vllm"), "0.6.6.post1", gpus()["a100-sxm4-80gb"], model("deepseek-ai/DeepSeek-V3"), {}, log)
    assert [(q.label, q.compute) for q in v3] == [("fp8", "fp16")]
    old = quant_choices(profile("vllm"), "0.5.0", gpus()["a100-sxm4-80gb"], model("deepseek-ai/DeepSeek-V3"), {}, RuleLog())
    assert old == []


def test_quantization_methods_appear_only_from_the_release_that_added_them():
    labels, log = _quants("vllm", "0.2.2", "t4", "meta-llama/Llama-2-7b-hf")
    assert "gptq" not in labels and "from vLLM 0.3.3" in log.rejections["vllm gptq"].reason


def test_published_checkpoints_are_preferred_over_quantizing_yourself():
    log = RuleLog()
    choices = quant_choices(profile("vllm"), "0.14.0", gpus()["rtx-4090"], model("mistralai/Mixtral-8x7B-Instruct-v0.1"), {}, log)
    awq = next(q for q in choices if q.label == "awq")
    assert awq.checkpoint_id == "TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ" and not awq.self_quantize
    fp8 = [q for q in choices if q.label == "fp8"]
    assert fp8 and all(q.online_full_weights for q in fp8)


def _driver(cuda, version=None, model_id="meta-llama/Llama-2-7b-chat-hf", gpu="Tesla T4"):
    raw = {"gpu": gpu, "model": model_id, "engine": "vllm", "cuda": cuda}
    if version:
        raw["engine_version"] = version
    req, log = parse_request(raw), RuleLog()
    return choose_version(profile("vllm"), req, log), log


def test_a_cuda_11_8_driver_gets_the_cu118_wheel_variant():
    choice, _ = _driver("11.8", "0.2.2")
    assert choice.cuda == "11.8" and choice.variant
    newest, _ = _driver("11.8")
    assert newest.version == "0.8.5" and newest.cuda == "11.8"  # the newest release with a cu118 wheel


def test_a_driver_older_than_every_wheel_is_rejected_with_an_upgrade_action():
    choice, log = _driver("11.4", "0.4.0.post1")
    assert choice is None
    assert "CUDA 11.4" in log.rejections["vllm 0.4.0.post1"].reason
    assert any("upgrade the NVIDIA driver" in a for a in log.actions)


def test_model_support_starts_at_the_release_that_added_it():
    choice, log = _driver("12.4", "0.4.0.post1", model_id="meta-llama/Llama-3.1-8B-Instruct", gpu="A100-SXM4-40GB")
    assert choice is None and "rope_scaling_llama3" in log.rejections["vllm 0.4.0.post1"].reason


def test_gemma2_soft_capping_on_turing_needs_a_release_with_xformers_soft_capping():
    choice, log = _driver("12.4", "0.6.3", model_id="google/gemma-2-9b-it", gpu="Tesla T4")
    assert choice is None and "soft-capping" in log.rejections["vllm 0.6.3"].reason
    newer, _ = _driver("12.4", "0.6.6.post1", model_id="google/gemma-2-9b-it", gpu="Tesla T4")
    assert newer is not None


def test_gemma2_on_ampere_before_flash_attention_soft_capping_needs_flashinfer():
    env, notes = attention_env(profile("vllm"), "0.5.3.post1", gpus()["a100-sxm4-80gb"], model("google/gemma-2-9b-it"))
    assert env == {"VLLM_ATTENTION_BACKEND": "FLASHINFER"} and notes
    env, _ = attention_env(profile("vllm"), "0.6.3", gpus()["a100-sxm4-80gb"], model("google/gemma-2-9b-it"))
    assert env == {}


def test_flash_attention_2_needs_sm80_so_turing_falls_back():
    _, notes = attention_env(profile("vllm"), "0.6.3", gpus()["t4"], model("meta-llama/Llama-2-7b-hf"))
    assert any("xformers" in n.lower() for n in notes)


def test_tensor_parallelism_must_divide_the_attention_heads():
    log = RuleLog()
    qwen2 = model("Qwen/Qwen2-7B-Instruct")  # 28 heads, 4 KV heads
    none = quant_choices(profile("vllm"), "0.6.3", gpus()["a100-sxm4-80gb"], qwen2, {}, RuleLog())[0]
    assert layouts(profile("vllm"), qwen2, 8, none, {}, log) == [(1, 1), (2, 1), (4, 1)]
    assert "tensor_parallel_size=8" in log.rejections


def test_int4_kernels_need_row_parallel_inputs_aligned_to_128():
    log = RuleLog()
    qwen72 = model("Qwen/Qwen2.5-72B-Instruct")  # intermediate 29568: 14784 per GPU at TP=2 (vllm#13640)
    own = QuantChoice(method="awq", label="awq", bits=4, compute="fp16")
    assert (2, 1) not in layouts(profile("vllm"), qwen72, 8, own, {}, log)
    assert "awq tensor_parallel_size=2" in log.rejections
    # Qwen's published AWQ checkpoint pads the MLP to 29696, so every TP size up to 8 divides it
    published = next(q for q in quant_choices(profile("vllm"), "0.14.0", gpus()["a100-sxm4-80gb"], qwen72, {}, RuleLog())
                     if q.label == "awq")
    assert published.intermediate == 29696
    assert (2, 1) in layouts(profile("vllm"), qwen72, 8, published, {}, RuleLog())


def test_fp8_kv_cache_by_release_and_architecture():
    assert kv_choices(profile("vllm"), "0.3.3", gpus()["l4"], {}, RuleLog()) == [None]
    assert kv_choices(profile("vllm"), "0.4.0.post1", gpus()["l4"], {}, RuleLog()) == [None, "fp8_e5m2"]
    assert kv_choices(profile("vllm"), "0.6.3", gpus()["l4"], {}, RuleLog()) == [None, "fp8"]
    log = RuleLog()
    assert kv_choices(profile("tensorrt-llm"), "0.18.2", gpus()["a100-sxm4-40gb"], {}, log) == [None]
    assert log.rejections


def test_awq_and_gptq_checkpoints_get_the_marlin_kernels_where_the_release_and_gpu_have_them():
    from advisor.services import recommend

    base = {"model": "TheBloke/Llama-2-70B-AWQ", "engine": "vllm", "gpu_count": 2}
    new = recommend({**base, "gpu": "A100-SXM4-80GB", "engine_version": "0.6.3"})["recommendations"][0]
    assert new["flags"]["quantization"] == "awq_marlin" and "--quantization awq_marlin" in new["command"]
    old = recommend({**base, "gpu": "A100-SXM4-80GB", "engine_version": "0.5.0"})["recommendations"][0]
    assert old["flags"]["quantization"] == "awq"  # before vllm#6745 the flag forced the slow kernel
    turing = recommend({**base, "gpu": "Tesla T4", "gpu_count": 4, "engine_version": "0.6.3"})["recommendations"]
    assert all(r["flags"].get("quantization") == "awq" for r in turing)  # Marlin needs sm80


def test_marlin_kernels_reach_turing_from_the_release_after_vllm_29901():
    awq, t4 = profile("vllm").quantization["awq"], gpus()["t4"]
    assert kernel_for(awq, "0.13.0", t4) is None and kernel_for(awq, "0.14.0", t4) == "awq_marlin"
    assert kernel_for(awq, "0.6.3", gpus()["a100-sxm4-80gb"]) == "awq_marlin"


def test_fp8_weight_only_widens_from_ampere_to_turing_over_releases():
    fp8_model = model("deepseek-ai/DeepSeek-V3")
    log = RuleLog()
    assert quant_choices(profile("vllm"), "0.13.0", gpus()["t4"], fp8_model, {}, log) == []
    assert "sm80" in log.rejections["vllm fp8"].reason and "5975" in log.rejections["vllm fp8"].source
    turing = quant_choices(profile("vllm"), "0.14.0", gpus()["t4"], fp8_model, {}, RuleLog())
    assert [(q.label, q.compute) for q in turing] == [("fp8", "fp16")]


def test_xformers_is_no_fallback_after_its_removal_in_vllm_0_12():
    _, notes = attention_env(profile("vllm"), "0.11.0", gpus()["t4"], model("meta-llama/Llama-2-7b-hf"))
    assert any("XFORMERS" in n for n in notes)
    _, notes = attention_env(profile("vllm"), "0.12.0", gpus()["t4"], model("meta-llama/Llama-2-7b-hf"))
    assert notes and not any("XFORMERS" in n for n in notes)


def test_a_weight_only_list_out_of_order_does_not_load(tmp_path):
    data = json.loads((ENGINES_DIR / "vllm.json").read_text())
    data["quantization"]["fp8"]["weight_only"].reverse()
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match="oldest first"):
        load_profile(path)


def test_sglang_on_turing_selects_the_triton_backend_with_each_releases_own_switch():
    sglang, t4 = profile("sglang"), gpus()["t4"]
    assert attention_flags(sglang, "0.2.15", t4) == {"disable_flashinfer": True}
    assert attention_flags(sglang, "0.3.1", t4) == {"attention_backend": "triton"}
    assert attention_flags(sglang, "0.3.1", gpus()["a100-sxm4-80gb"]) == {}
    _, notes = attention_env(sglang, "0.3.1", t4, model("meta-llama/Llama-2-7b-hf"))
    assert any("FlashInfer needs sm80+" in n and "--attention-backend triton" in n for n in notes)


def test_the_fallback_switch_reaches_the_sglang_command_on_a_t4():
    from advisor.services import recommend

    out = recommend({"gpu": "Tesla T4", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "sglang",
                     "engine_version": "0.3.5"})
    top = out["recommendations"][0]
    assert top["flags"]["attention_backend"] == "triton" and "--attention-backend triton" in top["command"]


def test_fp8_on_hopper_is_offered_from_vllm_0_5_0_not_only_from_0_5_3():
    labels, _ = _quants("vllm", "0.5.0", "h100-sxm5-80gb", "meta-llama/Llama-2-7b-hf")
    assert "fp8" in labels
    labels, log = _quants("vllm", "0.4.0.post1", "h100-sxm5-80gb", "meta-llama/Llama-2-7b-hf")
    assert "fp8" not in labels and "nm-vllm/issues/232" in log.rejections["vllm fp8"].source


def test_a_backend_the_user_pinned_is_kept_rather_than_replaced_by_the_fallback_switch():
    from advisor.services import recommend

    out = recommend({"gpu": "Tesla T4", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "sglang",
                     "engine_version": "0.3.5", "flags": {"attention_backend": "torch_native"}})
    assert out["recommendations"][0]["flags"]["attention_backend"] == "torch_native"

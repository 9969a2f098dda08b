"""End to end through advisor.services.recommend: the response contract and the decisions it makes."""
from __future__ import annotations

import pytest

from advisor.services import recommend

LLAMA8B = {"gpu": "A100-SXM4-40GB", "model": "meta-llama/Llama-3.1-8B-Instruct", "cuda": "12.4",
           "workload": {"prompt_tokens": 512, "output_tokens": 128, "concurrency": 8}}


def test_the_answer_follows_the_design_contract():
    out = recommend(LLAMA8B)
    assert set(out) == {"input", "feasible", "verdict", "recommendations", "rejected", "actions", "warnings"}
    assert out["feasible"] is True and out["recommendations"]
    rec = out["recommendations"][0]
    for key in ("engine", "engine_version", "install", "dtype", "quantization", "tensor_parallel_size",
                "pipeline_parallel_size", "flags", "command", "estimates", "meets_sla", "rationale", "evidence", "verify"):
        assert key in rec, key
    for key in ("weights_gib", "kv_cache_gib", "kv_tokens", "ttft_p95_ms", "tpot_p95_ms", "throughput_tok_s"):
        assert rec["estimates"][key] > 0, key
    assert all(e["source"] and e["quote"] for e in rec["evidence"])
    assert rec["engine"] in rec["command"] or "sglang" in rec["command"] or "trtllm" in rec["command"]


def test_without_an_engine_every_engine_is_considered_and_full_precision_wins_when_it_fits():
    out = recommend(LLAMA8B)
    top = out["recommendations"][0]
    assert top["quantization"] is None and top["dtype"] == "bfloat16" and top["tensor_parallel_size"] == 1
    assert len({r["engine"] for r in out["recommendations"]}) >= 1


def test_alternatives_differ_in_kind_not_only_in_the_spelling_of_an_fp8_kv_cache():
    canonical = {"gpu": "A100-SXM4-40GB", "cuda": "11.8", "model": "meta-llama/Llama-2-13b-chat-hf",
                 "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}, "sla": {"p95_ttft_ms": 500}}
    recs = recommend(canonical)["recommendations"]
    width = {None: 16, "fp8": 8, "fp8_e4m3": 8, "fp8_e5m2": 8}
    kinds = [(r["engine"], r["quantization"], width[r["kv_cache_dtype"]]) for r in recs]
    assert len(recs) == 3 and len(set(kinds)) == len(kinds), kinds
    assert len({r["engine"] for r in recs}) == 3  # SGLang's two FP8 spellings no longer fill two of three slots


def test_the_driver_picks_the_newest_release_it_can_run():
    out = recommend({**LLAMA8B, "engine": "vllm", "cuda": "12.2"})
    assert out["recommendations"][0]["engine_version"] == "0.8.5"  # its cu118 build runs on a CUDA 12.2 driver


def test_nothing_fits_is_said_clearly():
    out = recommend({"gpu": "Tesla T4", "model": "meta-llama/Llama-3.1-405B-Instruct", "engine": "vllm"})
    assert out["feasible"] is False and out["recommendations"] == []
    assert out["rejected"] and out["actions"]
    assert any("no configuration" in w for w in out["warnings"])


def test_an_engine_that_cannot_run_on_the_gpu_is_rejected_with_its_source():
    out = recommend({"gpu": "Tesla P100-PCIE-16GB", "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm"})
    assert out["feasible"] is False
    assert any(r["option"] == "vllm" and "compute capability" in r["reason"] for r in out["rejected"])
    assert any("llama.cpp" in a for a in out["actions"])


def test_a_quantized_checkpoint_no_engine_can_load_here_points_to_its_base_model():
    out = recommend({"gpu": "Tesla V100-SXM2-32GB", "model": "TheBloke/Llama-2-7B-Chat-AWQ"})
    assert out["feasible"] is False
    assert any("meta-llama/Llama-2-7b-hf" in a for a in out["actions"])


def test_user_fixed_flags_are_kept_and_named_when_they_make_it_infeasible():
    kept = recommend({**LLAMA8B, "engine": "vllm", "flags": {"max_model_len": 8192, "gpu_memory_utilization": 0.8}})
    flags = kept["recommendations"][0]["flags"]
    assert flags["max_model_len"] == 8192 and flags["gpu_memory_utilization"] == 0.8
    impossible = recommend({"gpu": "NVIDIA L4", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                            "flags": {"max_model_len": 131072, "kv_cache_dtype": "auto", "quantization": None}})
    assert impossible["feasible"] is False
    assert any("max_model_len=131072" in r["reason"] for r in impossible["rejected"])


def test_long_context_on_a_small_gpu_is_capped_to_what_the_kv_cache_holds():
    out = recommend({"gpu": "NVIDIA L4", "model": "meta-llama/Meta-Llama-3.1-8B-Instruct", "engine": "vllm",
                     "engine_version": "0.5.3.post1"})
    top = out["recommendations"][0]
    assert top["flags"]["max_model_len"] <= top["estimates"]["kv_tokens"] < 131072


def test_a_latency_sla_is_checked_and_reported():
    loose = recommend({**LLAMA8B, "engine": "vllm", "sla": {"p95_latency_ms": 60000}})
    assert loose["recommendations"][0]["meets_sla"] is True
    tight = recommend({**LLAMA8B, "engine": "vllm", "sla": {"p95_tpot_ms": 0.5}})
    assert all(r["meets_sla"] is False for r in tight["recommendations"])
    assert any("SLA" in w for w in tight["warnings"])


def test_spare_gpus_become_replicas_not_needless_tensor_parallelism():
    out = recommend({"gpu": "NVIDIA A10G", "gpu_count": 8, "model": "TheBloke/Llama-2-70B-AWQ", "engine": "vllm",
                     "engine_version": "0.2.7"})
    top = out["recommendations"][0]
    assert top["tensor_parallel_size"] * top["replicas"] == 8 and top["tensor_parallel_size"] <= 4


@pytest.mark.parametrize("engine, needle", [("vllm", "vllm bench serve"), ("tensorrt-llm", "genai-perf"),
                                            ("tgi", "genai-perf"), ("llama.cpp", "llama-bench"),
                                            ("sglang", "sglang.bench_serving")])
def test_each_recommendation_names_a_benchmark_for_its_engine(engine, needle):
    out = recommend({**LLAMA8B, "engine": engine, "cuda": "12.9"})
    assert out["recommendations"], out["rejected"]
    assert needle in out["recommendations"][0]["verify"]


def test_vllm_releases_before_the_bench_cli_use_benchmark_serving():
    out = recommend({**LLAMA8B, "engine": "vllm", "cuda": "12.4"})
    assert out["recommendations"][0]["verify"].startswith("python benchmarks/benchmark_serving.py --backend vllm")


def test_evidence_still_comes_from_the_catalog_when_the_ontology_has_nothing():
    rec = recommend(LLAMA8B)["recommendations"][0]
    assert any("huggingface.co/meta-llama/Llama-3.1-8B-Instruct" in e["source"] for e in rec["evidence"])


def test_fixed_flags_are_translated_to_each_engines_own_names():
    out = recommend({**LLAMA8B, "gpu": "A100 80GB", "engine": "sglang", "cuda": "12.9",
                     "flags": {"max_model_len": 8192, "gpu_memory_utilization": 0.8, "enable_torch_compile": True}})
    rec = out["recommendations"][0]
    assert rec["flags"]["context_length"] == 8192 and rec["flags"]["mem_fraction_static"] == 0.8
    assert "max_model_len" not in rec["flags"] and rec["flags"]["enable_torch_compile"] is True
    assert "--context-length 8192" in rec["command"] and "--enable-torch-compile" in rec["command"]


def test_a_tight_latency_sla_buys_tensor_parallelism_a_loose_one_buys_replicas():
    base = {"gpu": "A100-SXM4-40GB", "gpu_count": 4, "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
            "cuda": "12.8", "workload": {"prompt_tokens": 2048, "output_tokens": 128, "concurrency": 4}}
    loose = recommend(base)["recommendations"][0]
    tight = recommend({**base, "sla": {"p95_tpot_ms": 8}})["recommendations"][0]
    assert loose["tensor_parallel_size"] == 1 and loose["replicas"] == 4
    assert tight["tensor_parallel_size"] > 1 and tight["meets_sla"]
    assert tight["estimates"]["tpot_p95_ms"] < loose["estimates"]["tpot_p95_ms"]


def test_old_vllm_releases_are_launched_with_the_api_server_module():
    old = recommend({**LLAMA8B, "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm", "engine_version": "0.4.0.post1"})
    new = recommend({**LLAMA8B, "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm", "engine_version": "0.5.3.post1"})
    assert old["recommendations"][0]["command"].startswith("python -m vllm.entrypoints.openai.api_server --model ")
    assert new["recommendations"][0]["command"].startswith("vllm serve meta-llama/Llama-2-7b-hf")


def test_a_vllm_release_before_cuda_12_uses_the_cuda_11_8_build():
    out = recommend({"gpu": "A100-SXM4-40GB", "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm",
                     "engine_version": "0.1.7", "cuda": "11.8"})
    assert out["feasible"] and out["recommendations"][0]["install"] == "pip install vllm==0.1.7"


def test_a_high_memory_fraction_leaves_no_room_for_cuda_graphs_so_vllm_runs_eagerly():
    # a release before 0.21.0, which began measuring graph memory inside the fraction (LMCache #3430)
    base = {"gpu": "NVIDIA L4", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm", "engine_version": "0.20.0"}
    default = recommend(base)["recommendations"][0]
    tight = recommend({**base, "flags": {"gpu_memory_utilization": 0.97}})["recommendations"][0]
    assert default["flags"]["enforce_eager"] is False
    assert tight["flags"]["enforce_eager"] is True and "--enforce-eager" in tight["command"]
    kept = recommend({**base, "flags": {"gpu_memory_utilization": 0.97, "enforce_eager": False}})["recommendations"][0]
    assert kept["flags"]["enforce_eager"] is False
    profiled = recommend({**base, "engine_version": "0.21.0", "flags": {"gpu_memory_utilization": 0.97}})
    assert profiled["recommendations"][0]["flags"]["enforce_eager"] is False


def test_a_setup_that_misses_only_by_the_memory_fraction_is_named_as_an_action_not_a_recommendation():
    # under vLLM 0.6.3's accounting (V0: float32 logits, 4 bytes each) a 3B model in fp16 on an 8 GB card misses
    # only by the fraction; from 0.12 on the profiled sampler pass (~18 bytes per logit) takes more than that step
    out = recommend({"gpu": "Quadro RTX 4000", "model": "meta-llama/Llama-3.2-3B-Instruct", "engine": "vllm",
                     "engine_version": "0.6.3", "workload": {"prompt_tokens": 512, "output_tokens": 128, "concurrency": 1}})
    assert all(r["quantization"] for r in out["recommendations"])
    assert any("gpu_memory_utilization=0.95" in a and "enforce_eager" in a for a in out["actions"])


@pytest.mark.parametrize(("gpu", "model"), [("A100-SXM4-80GB", "meta-llama/Llama-3.1-8B-Instruct"),
                                            ("T4", "Qwen/Qwen2.5-7B-Instruct")])
def test_llama_cpp_slots_share_a_context_no_larger_than_the_kv_cache(gpu, model):
    response = recommend({"gpu": gpu, "model": model, "engine": "llama.cpp",
                          "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}})
    rec = response["recommendations"][0]
    ctx, slots = rec["flags"]["ctx_size"], rec["flags"]["parallel"]
    assert ctx <= rec["estimates"]["kv_tokens"], "--ctx-size is the whole KV cache, shared by every slot"
    assert 1 <= slots <= 16
    assert ctx // slots >= 1024 + 256, "each slot must hold one request of the workload"


def test_two_h100_on_a_cuda_12_4_driver_get_the_newest_release_built_for_it():
    out = recommend({"gpu": "H100 SXM", "gpu_count": 2, "cuda": "12.4", "model": "meta-llama/Llama-3.1-70B-Instruct",
                     "engine": "vllm", "workload": {"prompt_tokens": 2048, "output_tokens": 256, "concurrency": 32},
                     "sla": {"p95_tpot_ms": 60}})
    best = out["recommendations"][0]
    assert best["engine_version"] == "0.8.5"  # 0.9.0 moved to CUDA 12.8 wheels (and a cu126 one)
    assert any("CUDA >= 12.6 to use vLLM 0.10.0" in a for a in out["actions"])
    # V1 on H100 batches up to 1024 sequences by default (vllm#16158); the cap follows the KV cache instead
    assert best["flags"]["max_num_seqs"] > 256 or best["estimates"]["kv_tokens"] // (2048 + 256) <= 256
    assert out["verdict"]["status"] in {"meets_sla", "misses_sla"}


def test_a_release_line_that_dropped_volta_is_not_offered_on_a_v100():
    out = recommend({"gpu": "Tesla V100-SXM2-32GB", "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm"})
    assert out["recommendations"][0]["engine_version"] == "0.19.1"  # 0.20.0's build dropped sm70 (vllm#39878)
    dropped = {r["option"]: r for r in out["rejected"] if "compute capability >= 7.5" in r["reason"]}
    assert {"vllm 0.20.0", "vllm 0.21.0"} <= set(dropped)
    assert "(from 0.20.0)" in dropped["vllm 0.20.0"]["reason"]
    assert dropped["vllm 0.20.0"]["source"] == "https://github.com/vllm-project/vllm/pull/39878"
    refused = recommend({"gpu": "Tesla V100-SXM2-32GB", "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm",
                         "engine_version": "0.22.0"})
    assert refused["recommendations"] == [] and any("0.22.0" in r["option"] for r in refused["rejected"])

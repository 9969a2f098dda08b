"""Batch defaults per engine release and GPU: from vLLM 0.9.0 the V1 engine picks max_num_seqs and
max_num_batched_tokens from the device's memory and name (>= 70 GiB and not an A100: 1024 / 8192 for the
API server, else 256 / 2048; vllm/engine/arg_utils.py, PR #17885), and the advisor's flags follow the
release it recommends instead of one engine-wide 256."""
from __future__ import annotations

import json

import pytest

from advisor.catalog import gpus
from advisor.profiles import ENGINES_DIR, ProfileError, load_profile, profile
from advisor.services import recommend

SHORT = {"prompt_tokens": 512, "output_tokens": 128, "concurrency": 8}
VLLM_ARG_UTILS = "https://github.com/vllm-project/vllm/blob/99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b/vllm/engine/arg_utils.py"


@pytest.mark.parametrize(("gpu_id", "seqs", "tokens"), [
    ("a800-sxm4-80gb", 1024, 8192),   # 80 GB and not named A100
    ("h20-96gb", 1024, 8192),
    ("b200-180gb", 1024, 8192),
    ("h100-sxm5-80gb", 1024, 8192),
    ("a100-sxm4-80gb", 256, 2048),    # excluded by name (PR #17885)
    ("l40s", 256, 2048),              # under 70 GiB
])
@pytest.mark.parametrize("version", ["0.9.0", "0.19.1"])
def test_vllm_batch_defaults_follow_gpu_memory_and_name_from_0_9_0(gpu_id, seqs, tokens, version):
    vllm, gpu = profile("vllm"), gpus()[gpu_id]
    assert vllm.default("max_num_seqs", version, gpu) == seqs
    assert vllm.default("max_num_batched_tokens", version, gpu) == tokens
    value, rel = vllm.default_with_release("max_num_seqs", version, gpu)
    assert rel is not None and rel.version == "0.9.0" and rel.defaults_source == VLLM_ARG_UTILS


def test_vllm_0_8_5_keeps_its_h100_h200_only_rule():
    vllm = profile("vllm")
    assert vllm.default("max_num_seqs", "0.8.5", gpus()["h20-96gb"]) == 256
    assert vllm.default("max_num_seqs", "0.8.5", gpus()["h100-sxm5-80gb"]) == 1024
    assert vllm.default("max_num_seqs", "0.6.3", gpus()["h100-sxm5-80gb"]) == 256  # engine-wide V0 default


def test_an_a800_on_a_newer_release_is_not_capped_at_256():
    out = recommend({"gpu": "A800-SXM4-80GB", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                     "engine_version": "0.19.1", "workload": SHORT})
    rec = out["recommendations"][0]
    kv_bound = rec["estimates"]["kv_tokens"] // (512 + 128)
    assert rec["flags"]["max_num_seqs"] == min(1024, kv_bound) > 256
    assert rec["flags"]["max_num_batched_tokens"] == 8192
    assert f"--max-num-seqs {rec['flags']['max_num_seqs']}" in rec["command"]
    fact = next(e for e in rec["evidence"] if e["source"] == VLLM_ARG_UTILS)
    assert "vLLM 0.9.0 defaults on NVIDIA A800-SXM4-80GB: max_num_seqs 1024" in fact["quote"]
    assert "held by 0.19.1" in fact["quote"]
    assert any("below vLLM 0.19.1's default of 1024 on NVIDIA A800-SXM4-80GB" in line for line in rec["rationale"])


def test_the_same_request_on_an_a100_keeps_the_small_defaults():
    out = recommend({"gpu": "A100-SXM4-80GB", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
                     "engine_version": "0.19.1", "workload": SHORT})
    flags = out["recommendations"][0]["flags"]
    assert (flags["max_num_seqs"], flags["max_num_batched_tokens"]) == (256, 2048)


def test_memory_defaults_need_a_source_and_refuse_unknown_keys(tmp_path):
    data = json.loads((ENGINES_DIR / "vllm.json").read_text(encoding="utf-8"))
    rel = next(r for r in data["releases"] if r["version"] == "0.9.0")
    path = tmp_path / "engine.json"
    rel["memory_defaults"][0]["min_memroy_gib"] = 70
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match="min_memroy_gib"):
        load_profile(path)
    del rel["memory_defaults"][0]["min_memroy_gib"]
    del rel["defaults_source"]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match="defaults need a defaults_source"):
        load_profile(path)

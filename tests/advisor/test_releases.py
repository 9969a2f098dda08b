"""Engine releases between vLLM 0.9 and 0.21 and newer TensorRT-LLM builds: a request naming one gets that
release's own CUDA builds, wheel and source, and a newest-release search stops where the driver or the GPU
stops. Every expected value below is the catalogued fact of that release (see its `source`)."""
from __future__ import annotations

import json

import pytest

from advisor.profiles import ENGINES_DIR, ProfileError, load_profile, profile
from advisor.services import recommend
from advisor.versions import at_least

LLAMA8B = {"gpu": "A100-SXM4-80GB", "model": "meta-llama/Llama-3.1-8B-Instruct",
           "workload": {"prompt_tokens": 512, "output_tokens": 128, "concurrency": 8}}
WHEELS = "https://github.com/vllm-project/vllm/releases/download"


def _top(request: dict) -> tuple[dict, dict]:
    out = recommend(request)
    assert out["recommendations"], out["rejected"]
    return out, out["recommendations"][0]


def _release_evidence(rec: dict, version: str) -> dict:
    source = profile(rec["engine"]).release(version).source
    return next(e for e in rec["evidence"] if e["source"] == source)


@pytest.mark.parametrize(("version", "cuda", "install"), [
    ("0.10.0", "12.6", f"pip install {WHEELS}/v0.10.0/vllm-0.10.0+cu126-cp38-abi3-manylinux1_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu126"),
    ("0.10.0", "12.8", "pip install vllm==0.10.0"),
    ("0.11.0", "12.9", "pip install vllm==0.11.0"),
    ("0.12.0", "13.0", f"pip install {WHEELS}/v0.12.0/vllm-0.12.0+cu130-cp38-abi3-manylinux_2_31_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu130"),
    ("0.19.1", "13.0", f"pip install {WHEELS}/v0.19.1/vllm-0.19.1+cu130-cp38-abi3-manylinux_2_35_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu130"),
    ("0.20.0", "12.9", f"pip install {WHEELS}/v0.20.0/vllm-0.20.0+cu129-cp38-abi3-manylinux_2_31_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu129"),
    ("0.20.0", "13.0", "pip install vllm==0.20.0"),
    ("0.21.0", "12.9", f"pip install {WHEELS}/v0.21.0/vllm-0.21.0+cu129-cp38-abi3-manylinux_2_34_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu129"),
])
def test_a_named_release_is_installed_from_its_own_build_for_the_driver(version, cuda, install):
    out, rec = _top({**LLAMA8B, "engine": "vllm", "engine_version": version, "cuda": cuda})
    assert rec["engine_version"] == version and rec["install"] == install
    fact = _release_evidence(rec, version)
    assert fact["verified"] is True
    assert not any("not in the catalog" in w for w in out["warnings"])


def test_vllm_0_11_0_on_a_cuda_12_4_driver_is_refused_with_its_own_build_not_an_older_one():
    out = recommend({**LLAMA8B, "engine": "vllm", "engine_version": "0.11.0", "cuda": "12.4"})
    assert out["recommendations"] == []
    reason = next(r["reason"] for r in out["rejected"] if r["option"] == "vllm 0.11.0")
    assert "built for CUDA 12.9" in reason and "12.1" not in reason
    assert out["actions"] == ["upgrade the NVIDIA driver to one that supports CUDA >= 12.9 to use vLLM 0.11.0"]


def test_a_patch_release_the_catalog_lacks_takes_the_nearest_earlier_release_unverified():
    out, rec = _top({**LLAMA8B, "engine": "vllm", "engine_version": "0.11.2", "cuda": "12.9"})
    assert rec["engine_version"] == "0.11.2"
    assert any("taken from 0.11.0" in w and "next catalogued release is 0.12.0" in w for w in out["warnings"])
    fact = _release_evidence(rec, "0.11.0")
    assert fact["verified"] is False and "vLLM 0.11.0" in fact["quote"]


@pytest.mark.parametrize(("cuda", "newest", "install"), [
    ("12.6", "0.10.0", f"pip install {WHEELS}/v0.10.0/vllm-0.10.0+cu126-cp38-abi3-manylinux1_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu126"),
    ("12.8", "0.10.0", "pip install vllm==0.10.0"),
    ("12.9", "0.21.0", f"pip install {WHEELS}/v0.21.0/vllm-0.21.0+cu129-cp38-abi3-manylinux_2_34_x86_64.whl "
                       "--extra-index-url https://download.pytorch.org/whl/cu129"),
    ("13.0", "0.21.0", "pip install vllm==0.21.0"),
])
def test_the_newest_release_the_driver_can_run_is_chosen(cuda, newest, install):
    _, rec = _top({**LLAMA8B, "engine": "vllm", "cuda": cuda})
    assert rec["engine_version"] == newest and rec["install"] == install


def test_a_cuda_12_4_driver_is_offered_one_upgrade_per_cuda_level_for_the_newest_release_it_unlocks():
    out = recommend({"gpu": "H100 SXM", "gpu_count": 2, "cuda": "12.4", "model": "meta-llama/Llama-3.1-70B-Instruct",
                     "engine": "vllm", "workload": {"prompt_tokens": 2048, "output_tokens": 256, "concurrency": 32}})
    assert out["recommendations"][0]["engine_version"] == "0.8.5"
    upgrades = [a for a in out["actions"] if a.startswith("upgrade the NVIDIA driver")]
    assert sorted(upgrades) == sorted([
        "upgrade the NVIDIA driver to one that supports CUDA >= 12.6 to use vLLM 0.10.0",
        "upgrade the NVIDIA driver to one that supports CUDA >= 12.9 to use vLLM 0.21.0",
    ])
    newer = {f"vllm {r.version}" for r in profile("vllm").releases if at_least(r.version, "0.9.0")}
    assert len(newer) >= 12 and newer <= {r["option"] for r in out["rejected"]}


@pytest.mark.parametrize(("cuda", "version", "row"), [
    ("12.8", "0.18.2", None),
    ("12.9", "1.0.0", "| 1.0.0 | 12.9.1.010 |"),
    ("13.0", "1.1.0", "| 1.1.0 | 13.0.2.006 |"),
])
def test_tensorrt_llm_releases_follow_the_triton_compatibility_matrix(cuda, version, row):
    _, rec = _top({**LLAMA8B, "engine": "tensorrt-llm", "cuda": cuda})
    assert rec["engine_version"] == version
    fact = _release_evidence(rec, version)
    assert fact["verified"] is True and (row is None or row in fact["quote"])


def test_the_page_of_each_release_field_is_the_one_it_is_read_from():
    vllm = profile("vllm")
    assert vllm.release("0.16.0").source_of("torch") == "https://github.com/vllm-project/vllm/issues/35462"
    assert vllm.release("0.16.0").source_of("cuda") == vllm.release("0.16.0").source
    assert vllm.min_cc_at("0.19.1") == "7.0" and vllm.min_cc_at("0.20.0") == "7.5"


def _vllm_data() -> dict:
    return json.loads((ENGINES_DIR / "vllm.json").read_text(encoding="utf-8"))


def _write(tmp_path, data):
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_field_source_for_a_field_the_release_does_not_set_is_a_load_error(tmp_path):
    data = _vllm_data()
    release = next(r for r in data["releases"] if r["version"] == "0.11.0")
    release["field_sources"] = {"torch": {"source": "https://github.com/vllm-project/vllm/issues/30633"}}
    with pytest.raises(ProfileError, match="does not set"):
        load_profile(_write(tmp_path, data))


def test_a_field_source_for_an_unknown_field_is_a_load_error(tmp_path):
    data = _vllm_data()
    release = next(r for r in data["releases"] if r["version"] == "0.16.0")
    release["field_sources"]["torch_version"] = release["field_sources"].pop("torch")
    with pytest.raises(ProfileError, match="torch_version"):
        load_profile(_write(tmp_path, data))


def test_a_volta_gpu_on_a_cuda_13_driver_gets_the_cuda_12_build_because_cuda_13_dropped_sm70():
    v100 = {"gpu": "Tesla V100-SXM2-32GB", "model": "meta-llama/Llama-2-7b-hf", "engine": "vllm", "cuda": "13.0"}
    _, rec = _top(v100)
    assert rec["engine_version"] == "0.19.1" and rec["install"] == "pip install vllm==0.19.1"
    _, turing = _top({**v100, "gpu": "Tesla T4"})
    assert turing["engine_version"] == "0.21.0" and turing["install"] == "pip install vllm==0.21.0"
    out = recommend({**v100, "engine_version": "0.12.0", "cuda": "13.0"})
    assert out["recommendations"][0]["install"] == "pip install vllm==0.12.0"  # not its +cu130 variant


def test_sglang_flags_and_kv_cache_dtypes_follow_the_release_that_added_them():
    sglang = profile("sglang")
    assert sglang.flag("attention_backend", "0.3.0") is None and sglang.flag("disable_flashinfer", "0.3.0")
    assert sglang.flag("attention_backend", "0.3.1") == "--attention-backend"
    assert sglang.flag("disable_flashinfer", "0.3.1") is None
    assert not sglang.kv_cache_dtypes["fp8_e5m2"].covers("0.2.13") and sglang.kv_cache_dtypes["fp8_e5m2"].covers("0.3.0")
    assert not sglang.kv_cache_dtypes["fp8_e4m3"].covers("0.4.1") and sglang.kv_cache_dtypes["fp8_e4m3"].covers("0.4.1.post5")
    assert sglang.technique_on("chunked_prefill", "0.2.13") and sglang.technique("chunked_prefill", "0.2.10") is None


def test_sglang_0_2_releases_offer_no_fp8_kv_cache_and_every_sglang_release_cites_a_page():
    out, _ = _top({**LLAMA8B, "engine": "sglang", "engine_version": "0.2.13"})
    assert all(r["kv_cache_dtype"] is None for r in out["recommendations"])
    newer, _ = _top({**LLAMA8B, "engine": "sglang", "engine_version": "0.3.0"})
    assert any(r["kv_cache_dtype"] == "fp8_e5m2" for r in newer["recommendations"])
    assert all(r.source.startswith("https://") for r in profile("sglang").releases)
    assert [r.version for r in profile("sglang").releases][0] == "0.2.0"


def test_vllm_0_6_2_and_0_6_3_shipped_no_cu118_wheel_so_a_cuda_11_8_driver_is_refused_them():
    for version in ("0.6.2", "0.6.3"):
        out = recommend({**LLAMA8B, "engine": "vllm", "engine_version": version, "cuda": "11.8"})
        assert out["feasible"] is False and "issues/10319" in profile("vllm").release(version).source
    _, rec = _top({**LLAMA8B, "engine": "vllm", "engine_version": "0.6.1.post2", "cuda": "11.8"})
    assert "+cu118" in rec["install"]


def test_vllm_0_8_5_and_0_9_0_install_from_their_github_wheels_on_older_drivers():
    _, rec = _top({**LLAMA8B, "engine": "vllm", "engine_version": "0.8.5", "cuda": "12.2"})
    assert rec["install"].startswith(f"pip install {WHEELS}/v0.8.5/vllm-0.8.5+cu118-cp38-abi3-manylinux1_x86_64.whl")
    _, rec = _top({**LLAMA8B, "engine": "vllm", "engine_version": "0.9.0", "cuda": "12.6"})
    assert rec["install"].startswith(f"pip install {WHEELS}/v0.9.0/vllm-0.9.0+cu126-cp38-abi3-manylinux1_x86_64.whl")

"""Catalogs: GPU names people type resolve, every entry cites a public source, model shapes add up."""
from __future__ import annotations

import pytest

from advisor.catalog import closest_gpu_names, gpus, load_json, resolve_gpu
from advisor.model_specs import quantized_checkpoints, resolve_model


@pytest.mark.parametrize("typed, gpu_id", [
    ("A100-SXM4-40GB", "a100-sxm4-40gb"), ("A100 40GB", "a100-sxm4-40gb"), ("NVIDIA A100-40G", "a100-sxm4-40gb"),
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"), ("A100 80GB PCIe", "a100-pcie-80gb"),
    ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"), ("Tesla V100-PCIE-16GB", "v100-pcie-16gb"), ("Tesla T4", "t4"),
    ("NVIDIA L4", "l4"), ("NVIDIA GeForce RTX 4090", "rtx-4090"), ("RTX4090", "rtx-4090"), ("NVIDIA A10G", "a10g"),
    ("A800 80GB", "a800-sxm4-80gb"), ("NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"), ("H100 PCIe", "h100-pcie-80gb"),
    ("Quadro RTX 8000", "quadro-rtx-8000"), ("RTX 6000 Ada", "rtx-6000-ada"), ("Tesla P100-PCIE-16GB", "p100-pcie-16gb"),
    ("NVIDIA RTX A6000", "rtx-a6000"), ("NVIDIA A40", "a40"), ("L40", "l40"), ("GeForce RTX 3090 24GB", "rtx-3090"),
])
def test_gpu_names_as_people_write_them_resolve(typed, gpu_id):
    assert resolve_gpu(typed).id == gpu_id


def test_an_unknown_gpu_resolves_to_nothing_but_has_close_names():
    assert resolve_gpu("Banana GPU 9000") is None
    # real GPUs the catalog lacks must not silently become a near namesake
    assert resolve_gpu("Quadro RTX 6000") is None  # Turing, not the RTX 6000 Ada
    assert resolve_gpu("Tesla V100S-PCIE-32GB") is None
    assert resolve_gpu("RTX 3080 12GB") is None  # the catalog only knows the 10 GB card
    names = closest_gpu_names("Tesla V100 SXM3")
    assert names and all(isinstance(n, str) for n in names)


def test_the_catalog_covers_the_gpus_the_issue_lists():
    wanted = {"v100-sxm2-16gb", "v100-sxm2-32gb", "p100-pcie-16gb", "t4", "a10", "a10g", "l4", "l40s", "a100-sxm4-40gb",
              "a100-sxm4-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "a800-sxm4-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
              "h200-sxm-141gb", "rtx-3090", "rtx-4090", "quadro-rtx-4000", "quadro-rtx-8000", "rtx-6000-ada"}
    assert wanted <= set(gpus())


def test_every_gpu_engine_and_model_entry_cites_a_public_source():
    for g in load_json("gpus.json")["gpus"]:
        assert g["sources"] and all(s.startswith("https://") for s in g["sources"]), g["id"]
    for m in load_json("models.json")["models"]:
        assert m["source"].startswith("https://huggingface.co/"), m["id"]


def test_numbers_a_vendor_does_not_publish_are_estimated_and_flagged():
    a10g = gpus()["a10g"]
    assert a10g.tflops == gpus()["a10"].tflops
    assert a10g.estimated


def test_usable_memory_matches_what_cuda_reports():
    # torch reports 39.39 GiB on an A100 40GB (vllm#2363) and ~22.07 GiB on an A10G with ECC
    assert gpus()["a100-sxm4-40gb"].usable_gib == pytest.approx(39.39, abs=0.01)
    assert gpus()["a10g"].usable_gib == pytest.approx(22.07, abs=0.15)


@pytest.mark.parametrize("model_id, total_b, active_b", [
    ("meta-llama/Llama-2-7b-hf", 6.74, 6.74), ("meta-llama/Llama-2-70b-hf", 68.98, 68.98),
    ("meta-llama/Llama-3.1-8B-Instruct", 8.03, 8.03), ("meta-llama/Llama-3.1-405B-Instruct", 405.85, 405.85),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.70, 12.88), ("Qwen/Qwen3-30B-A3B", 30.53, 3.35),
    ("google/gemma-2-9b-it", 9.24, 9.24),
])
def test_parameter_counts_from_the_config_match_the_published_sizes(model_id, total_b, active_b):
    spec, warnings = resolve_model(model_id)
    assert spec.params_total / 1e9 == pytest.approx(total_b, abs=0.02)
    assert spec.params_active / 1e9 == pytest.approx(active_b, abs=0.02)
    assert warnings == []


def test_the_catalog_holds_at_least_forty_base_models():
    assert sum(1 for m in load_json("models.json")["models"] if "base" not in m) >= 40


def test_a_pre_quantized_checkpoint_keeps_its_base_shape_and_method():
    spec, _ = resolve_model("TheBloke/Llama-2-70B-AWQ")
    assert (spec.quantization, spec.weight_bits, spec.layers, spec.kv_heads) == ("awq", 4, 80, 8)
    assert any(c["id"] == "TheBloke/Llama-2-70B-AWQ" for c in quantized_checkpoints("meta-llama/Llama-2-70b-hf"))


def test_a_model_is_never_sized_from_the_size_in_its_name():
    assert resolve_model("someorg/SuperChat-13B-v2") == (None, [])
    assert resolve_model("facebook/opt-125m") == (None, [])


def test_a_requantized_checkpoint_of_a_catalog_model_borrows_its_shape_and_says_so():
    quantized, notes = resolve_model("someone/Meta-Llama-3.1-8B-Instruct-AWQ-INT4")
    assert quantized.quantization == "awq" and quantized.layers == 32
    assert "using the shape of meta-llama" in notes[0]


def test_an_unknown_id_without_a_size_cannot_be_sized():
    assert resolve_model("someorg/mystery") == (None, [])


@pytest.mark.parametrize("typed, gpu_id", [
    ("NVIDIA B200", "b200-180gb"), ("GB200", "gb200-186gb"), ("NVIDIA GeForce RTX 5090", "rtx-5090"),
    ("NVIDIA H20", "h20-96gb"), ("NVIDIA H100 NVL", "h100-nvl-94gb"), ("NVIDIA GH200 480GB", "gh200-96gb"),
    ("NVIDIA A30", "a30"),
])
def test_the_newer_gpus_resolve_and_cite_their_pages(typed, gpu_id):
    gpu = resolve_gpu(typed)
    assert gpu.id == gpu_id and gpu.sources and all(s.startswith("https://") for s in gpu.sources)


def test_blackwell_needs_a_cuda_12_8_build():
    from advisor.services import recommend

    old = recommend({"gpu": "B200", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm", "engine_version": "0.8.5"})
    assert old["recommendations"] == []
    assert any("needs CUDA >= 12.8" in r["reason"] for r in old["rejected"])
    new = recommend({"gpu": "B200", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm"})
    assert new["recommendations"][0]["engine_version"] in {"0.9.0", "0.14.0", "0.21.0"}
    assert any("TFLOPS (from h100-sxm5-80gb)" in w for w in new["warnings"])  # estimated, and said so

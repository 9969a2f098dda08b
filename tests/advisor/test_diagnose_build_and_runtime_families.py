"""Failure families diagnose learnt while reading the "blind9" error split (2026-12-03): an older CUDA check's
"CUDA error <code> at <file>:<line>: <runtime string>" read as the runtime string, a binary built for another GPU
answered with the build option to rebuild with, WSL's pinned-memory limit, a quantization method that refused
CUDA graphs, TGI's prefill budget that cannot go below the input length, a JIT kernel without the CUDA toolkit,
and SGLang's SGL_-prefixed variables. Each error string is written from the engine's or library's source."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor import known_failures, named_fixes
from advisor.error_text import recognise, runtime_form
from advisor.failures import CatalogError, load_file


def _matched(text: str) -> tuple[list[str], list[dict]]:
    rec, matches = known_failures.match(text)
    return [m.signature.id for m in matches], [a for m in matches[:3] for a in known_failures.actions(m, rec)]


def test_an_older_cuda_checks_code_and_line_are_read_as_the_runtime_error_string():
    # ggml-cuda.cu's CUDA_CHECK before 2024: fprintf(stderr, "CUDA error %d at %s:%d: %s\n", err_, __FILE__, ...)
    assert runtime_form("CUDA error 2 at /src/llama.cpp/ggml-cuda.cu:4120: out of memory") == "CUDA error: out of memory"
    assert runtime_form("CUDA error 700 at ggml-cuda.cu:88: an illegal memory access was encountered") == (
        "CUDA error: an illegal memory access was encountered")
    assert runtime_form("CUDA error: out of memory") is None  # already the runtime's form
    assert runtime_form("CUDA error 2 at ggml-cuda.cu:88: cublasCreate(&handle)") is None  # no runtime string follows


def test_an_out_of_memory_in_the_older_ggml_format_is_a_llama_cpp_out_of_memory():
    ids, actions = _matched("ggml_init_cublas: found 1 CUDA devices\nCUDA error 2 at /src/llama.cpp/ggml-cuda.cu:4120: "
                            "out of memory")
    assert "cuda-out-of-memory" in ids
    assert {a["engine"] for a in actions} == {"llama.cpp"}
    assert any(a["flag"] in ("-ngl", "--n-gpu-layers") and a["direction"] == "lower" for a in actions), actions


def test_invalid_device_function_asks_for_a_rebuild_for_the_gpus_target_as_a_cmake_option():
    ids, actions = _matched("CUDA error 98 at /app/llama.cpp/ggml-cuda.cu:7012: invalid device function")
    assert ids[0] == "invalid-device-function"
    builds = [a for a in actions if a.get("applies_to") == "cmake"]
    assert [a["flag"].split("=")[0] for a in builds] == ["-DGPU_TARGETS", "-DAMDGPU_TARGETS", "-DCMAKE_CUDA_ARCHITECTURES"]
    assert all(a["engine"] == "llama.cpp" and a["direction"] == "set" for a in builds)
    # hipified builds of other libraries name the enum instead
    assert "invalid-device-function" in _matched("hipErrorInvalidDeviceFunction raised by hipLaunchKernel")[0]


def _fix_file(tmp_path: Path, fix: dict) -> Path:
    path = tmp_path / "llama.cpp.json"
    path.write_text(json.dumps({"engine": "llama.cpp", "about": "one signature to test the build validator",
                                "signatures": [{"id": "test-signature", "title": "A test failure", "kind": "version",
                                                "patterns": ["some error"], "source": "https://example.org/doc",
                                                "fixes": {"llama.cpp": [fix]}}]}))
    return path


def test_a_build_option_is_a_cmake_cache_variable_set_to_a_value(tmp_path: Path):
    why = "a reason that is long enough"
    assert load_file(_fix_file(tmp_path, {"build": "-DGPU_TARGETS", "direction": "set", "value": "gfx1100", "why": why}))
    with pytest.raises(CatalogError, match="set to a value"):
        load_file(_fix_file(tmp_path, {"build": "-DGPU_TARGETS", "direction": "set", "why": why}))
    with pytest.raises(CatalogError, match="set to a value"):
        load_file(_fix_file(tmp_path, {"build": "-DGPU_TARGETS", "direction": "unset", "value": "x", "why": why}))
    with pytest.raises(CatalogError):
        load_file(_fix_file(tmp_path, {"build": "--gpu-targets", "direction": "set", "value": "x", "why": why}))


def test_pinned_memory_is_suspected_only_when_the_text_says_wsl():
    wsl = "running llama-server on WSL2: CUDA error 2 at ggml-cuda.cu:512: out of memory"
    ids, actions = _matched(wsl)
    assert ids[0] == "llamacpp-pinned-memory-wsl"
    assert ("llama.cpp", "GGML_CUDA_NO_PINNED=1", "set") in {(a["engine"], a["flag"], a["direction"]) for a in actions}
    assert "llamacpp-pinned-memory-wsl" not in _matched("llama-server: CUDA error 2 at ggml-cuda.cu:512: out of memory")[0]
    # PyTorch's out-of-memory on WSL names no engine: not read as llama.cpp's pinned buffers
    torch_oom = _matched("On WSL2: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")[0]
    assert "llamacpp-pinned-memory-wsl" not in torch_oom and "cuda-out-of-memory" in torch_oom


def test_a_quantization_method_that_refuses_cuda_graphs_gets_eager_mode():
    ids, actions = _matched("vllm serve ... --quantization bitsandbytes\nValueError: BitAndBytes with enforce_eager = "
                            "False is not supported yet.")
    assert ids == ["vllm-quantization-needs-eager"]
    assert actions[0]["flag"] == "--enforce-eager" and actions[0]["direction"] == "set"


def test_a_prefill_that_does_not_fit_also_lowers_the_input_length_it_cannot_go_below():
    # flash_causal_lm.py's warm-up error; the launcher's default budget is max_input_tokens + 50
    ids, actions = _matched("text_generation_launcher: RuntimeError: Not enough memory to handle 32818 prefill tokens. "
                            "You need to decrease `--max-batch-prefill-tokens`")
    assert ids[0] == "tgi-prefill-tokens-do-not-fit"
    flags = [(a["flag"], a["direction"]) for a in actions]
    assert flags.index(("--max-batch-prefill-tokens", "lower")) < flags.index(("--max-input-tokens", "lower"))


def test_a_jit_kernel_build_without_the_cuda_toolkit_sets_cuda_home():
    ids, actions = _matched("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.")
    assert ids == ["cuda-home-not-set"]
    assert {(a["engine"], a["flag"]) for a in actions} >= {("sglang", "CUDA_HOME=/usr/local/cuda"),
                                                          ("vllm", "CUDA_HOME=/usr/local/cuda")}


def test_sglangs_older_sgl_prefix_is_an_engine_variable_the_message_can_name():
    text = "python -m sglang.launch_server: DeepGEMM's JIT build fails on this GPU; disable it with SGL_ENABLE_JIT_DEEPGEMM"
    named = named_fixes.named(text, recognise(text).engine)
    # an on/off variable is switched off by setting it to 0
    assert [(n.written, n.engine, n.direction, n.value) for n in named] == [
        ("SGL_ENABLE_JIT_DEEPGEMM", "sglang", "set", "0")]
    # a variable echoed with no directive before it is not advice
    echoed = "env: SGL_ENABLE_JIT_DEEPGEMM=1 python -m sglang.launch_server"
    assert named_fixes.named(echoed, "sglang") == []

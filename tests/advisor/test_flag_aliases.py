"""One alias table of each engine's documented flag spellings (`flag_aliases` in the engine profiles): a
written flag, short option, environment variable or API keyword names the same profile key, a table entry
for a flag the profile lacks does not load, and the diagnose benchmark's alias scorer — unlike its literal
one — counts an answer spelt by a documented alias."""
from __future__ import annotations

import json

import pytest

from advisor.profiles import ENGINES_DIR, ProfileError, load_profile, profile, profiles
from benchmarks.diagnose import error_hit, resolves, same_flag


@pytest.mark.parametrize(("engine", "written", "key"), [
    ("llama.cpp", "-ngl", "n_gpu_layers"), ("llama.cpp", "--n-gpu-layers", "n_gpu_layers"),
    ("llama.cpp", "--gpu-layers", "n_gpu_layers"), ("llama.cpp", "LLAMA_ARG_N_GPU_LAYERS=99", "n_gpu_layers"),
    ("llama.cpp", "-c", "max_model_len"), ("llama.cpp", "--ctx-size", "max_model_len"),
    ("vllm", "-tp", "tensor_parallel_size"), ("vllm", "tensor_parallel_size=2", "tensor_parallel_size"),
    ("sglang", "--tp-size", "tensor_parallel_size"), ("sglang", "--tensor-parallel-size", "tensor_parallel_size"),
    ("tensorrt-llm", "free_gpu_memory_fraction", "gpu_memory_utilization"),
])
def test_each_documented_spelling_names_its_flag_key(engine: str, written: str, key: str):
    assert profile(engine).keys_named(written) == {key}


def test_a_spelling_no_engine_documents_names_nothing():
    assert profile("llama.cpp").keys_named("--gpu-layer-count") == set()
    assert profile("vllm").keys_named("-ngl") == set()


def test_every_alias_entry_cites_the_engines_argument_list():
    for eng in profiles().values():
        for key, aliases in eng.flag_aliases.items():
            assert key in eng.flags and aliases.source.startswith("https://")


def test_an_alias_for_a_flag_the_profile_lacks_does_not_load(tmp_path):
    data = json.loads((ENGINES_DIR / "llama.cpp.json").read_text(encoding="utf-8"))
    data["flag_aliases"]["no_such_flag"] = {"names": ["-x"], "source": "https://example.org/args"}
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match="no_such_flag"):
        load_profile(path)


def test_the_alias_scorer_counts_a_documented_alias_the_literal_scorer_does_not():
    action = {"engine": "llama.cpp", "flag": "-ngl", "direction": "lower"}
    fix = {"flag": "--n-gpu-layers", "direction": "lower"}
    assert not resolves(action, fix, "llama.cpp") and resolves(action, fix, "llama.cpp", aliases=True)
    case = {"engine": "llama.cpp", "fixes": [fix]}
    result = {"findings": [{"actions": [action]}]}
    assert not error_hit(result, case) and error_hit(result, case, aliases=True)


def test_the_alias_scorer_still_tells_different_settings_and_engines_apart():
    assert not same_flag("-ngl", "--ctx-size", "llama.cpp", aliases=True)
    assert not same_flag("-tp", "--pipeline-parallel-size", "vllm", aliases=True)
    assert not resolves({"engine": "vllm", "flag": "-ngl", "direction": "lower"},
                        {"flag": "--n-gpu-layers", "direction": "lower"}, "llama.cpp", aliases=True)
    assert same_flag("NCCL_P2P_DISABLE=1", "NCCL_P2P_DISABLE", "vllm", aliases=False)


def test_a_cmake_option_is_the_variable_a_thread_writes_bare():
    assert same_flag("-DGGML_CUDA_GRAPHS=OFF", "GGML_CUDA_GRAPHS", "llama.cpp", aliases=False)
    # a short flag whose letter is D followed by lower case is no CMake option
    assert not same_flag("-Dfoo", "foo", "llama.cpp", aliases=False)

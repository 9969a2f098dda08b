"""Diagnose answers that are no engine flag: environment variables (NCCL's, huggingface_hub's), the container's
limits (`docker run --shm-size`), an upgrade when a launcher refuses a flag its engine documents in later
releases, the documented spelling when a command misspells one, and a hang described in words as a crash with
no stated cause. Each case is a real error string (the engine's or library's own text, as issue threads paste it)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor import known_failures, library_env, named_fixes, suspects, unknown_flags
from advisor.error_text import recognise
from advisor.failures import CatalogError, load_file


def _fixes(text: str) -> set[tuple[str, str, str]]:
    rec, matches = known_failures.match(text)
    return {(a["engine"], a["flag"], a["direction"]) for m in matches[:3] for a in known_failures.actions(m, rec)}


def _refused(text: str) -> set[tuple[str, str, str]]:
    return {(a["engine"], a["flag"], a["direction"]) for a in unknown_flags.actions(text, recognise(text))}


def test_a_process_killed_by_a_bus_error_in_a_container_gets_a_larger_shm_size():
    fixes = _fixes("Error: Download process was signaled to shutdown with signal 7")
    assert ("tgi", "--shm-size", "raise") in fixes
    assert ("vllm", "--shm-size", "raise") in fixes


def test_an_nccl_system_error_offers_the_containers_shared_memory_beside_the_p2p_switch():
    for text in ("RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
                 "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error "
                 "(run with NCCL_DEBUG=INFO for details)"):
        fixes = _fixes(text)
        assert ("sglang", "--shm-size", "raise") in fixes, text
        assert ("sglang", "NCCL_P2P_DISABLE=1", "set") in fixes, text


def test_nccl_failing_to_pin_memory_unsets_its_buffer_size_and_lifts_the_containers_memlock():
    fixes = _fixes("misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory")
    assert ("vllm", "NCCL_BUFFSIZE", "unset") in fixes
    assert ("vllm", "--ulimit", "set") in fixes


def test_a_message_that_says_to_disable_an_enable_variable_sets_it_to_zero():
    found = named_fixes.named("Consider disabling HF_HUB_ENABLE_HF_TRANSFER for better error handling", None)
    assert [(n.written, n.direction, n.value) for n in found] == [("HF_HUB_ENABLE_HF_TRANSFER", "set", "0")]
    # a variable that is no on/off switch is still removed when the message says so
    found = named_fixes.named("Try to unset NCCL_BUFFSIZE before starting the server", None)
    assert [(n.written, n.direction) for n in found] == [("NCCL_BUFFSIZE", "unset")]


def test_a_one_letter_option_the_parser_refused_is_answered_in_that_spelling():
    text = ('Failed to load llama-server: llamacpp error: Error: error while handling argument "-c": stoi\n'
            "usage:\n-c,    --ctx-size N     size of the prompt context (default: 4096, 0 = loaded from model)")
    actions = named_fixes.actions(text, recognise(text))
    assert any(a["engine"] == "llama.cpp" and a["flag"] == "-c" and a["direction"] == "set" for a in actions), actions


def test_a_refused_flag_the_engine_documents_means_the_release_predates_it():
    # argparse under vLLM's api_server: no engine named, but only vLLM documents --lora-modules
    assert _refused("api_server.py: error: unrecognized arguments: --lora-modules sql-lora=/models/sql-lora") == {
        ("vllm", "upgrade", "upgrade")}
    # llama.cpp's own parser (common/arg.cpp)
    assert ("llama.cpp", "upgrade", "upgrade") in _refused(
        "llama-server -hf ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF --port 8012 -ngl 99\nerror: invalid argument: -hf")


def test_a_misspelt_flag_on_the_command_is_answered_with_the_documented_spelling_and_its_value():
    text = ("error: unknown argument: --ctx_size\n./main --model ./models/mixtral.Q6_K.gguf --threads 8 "
            "--ctx_size 32768 --n_predict -1 --chatml")
    actions = unknown_flags.actions(text, recognise(text))
    respelt = next(a for a in actions if a["flag"] == "--ctx-size")
    assert (respelt["engine"], respelt["direction"], respelt["value"]) == ("llama.cpp", "set", "32768")
    assert not any(a["direction"] == "upgrade" for a in actions)  # the refused spelling is no documented one


def test_a_refused_flag_the_profile_does_not_list_gets_a_conditional_upgrade_naming_no_release():
    text = "vllm serve Qwen/QwQ-32B --enable-reasoning-parser\nvllm: error: unrecognized arguments: --enable-reasoning-parser"
    actions = unknown_flags.actions(text, recognise(text))
    assert [(a["engine"], a["direction"], a["value"]) for a in actions] == [("vllm", "upgrade", None)]
    assert "If vLLM's current documentation lists it" in actions[0]["why"]


def test_a_refused_flag_that_differs_from_a_documented_one_only_by_its_dashes_gets_the_documented_spelling():
    # ggml-org/llama.cpp#23739: '--ngl' for '-ngl'
    assert _refused("Misc. bug: error: invalid argument: --ngl") == {("llama.cpp", "-ngl", "set")}


def test_a_typographic_dash_is_read_as_two_and_an_older_release_gets_its_own_spelling_before_the_upgrade():
    # huggingface/text-generation-inference#1903: a 1.4 image refuses '–max-input-tokens' (clap, pasted en-dash)
    text = "error: unexpected argument \u2018\u2013max-input-tokens\u2019 found"
    actions = unknown_flags.actions(text, recognise(text))
    assert [(a["flag"], a["direction"]) for a in actions] == [("--max-input-length", "set"), ("upgrade", "upgrade")]
    assert "1.4.5" in actions[0]["why"] and actions[1]["value"] == "2.0.0"


def test_another_engines_flag_is_dropped_and_an_underscored_one_respelt_with_its_value():
    # sgl-project/sglang#4116: vLLM's --enable-reasoning given to SGLang
    assert ("sglang", "--enable-reasoning", "unset") in _refused(
        "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --enable-reasoning --reasoning-parser "
        "deepseek-r1\nlaunch_server.py: error: unrecognized arguments: --enable-reasoning")
    # sgl-project/sglang#12818
    text = "launch_server.py: error: unrecognized arguments: --reasoning_parser kimi_k2"
    respelt = next(a for a in unknown_flags.actions(text, recognise(text)) if a["flag"] == "--reasoning-parser")
    assert (respelt["engine"], respelt["direction"], respelt["value"]) == ("sglang", "set", "kimi_k2")


def test_no_refused_flag_no_answer_and_an_unknown_flag_is_not_guessed():
    assert _refused("RuntimeError: CUDA error: invalid argument\nCUDA kernel errors might be asynchronously reported") == set()
    assert _refused("llama-server --ctx_size 4096 -m model.gguf") == set()  # no parser complained
    # a flag no profile knows, on an engine the text does not show, gets nothing
    assert _refused("api_server.py: error: unrecognized arguments: --made-up-option 3") == set()


def test_a_hang_described_in_words_is_a_crash_with_no_stated_cause():
    assert suspects.crashed("when I add --tp 2, the server got stuck at this logging line ... after 5 minutes, "
                            "the watch dog timeout.")
    assert suspects.crashed("Server stuck at 'Capturing cudagraphs for decoding' with --tensor-parallel-size 4")
    assert not suspects.crashed("Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00")


def _fix_file(tmp_path: Path, fix: dict) -> Path:
    path = tmp_path / "common.json"
    path.write_text(json.dumps({"engine": None, "about": "one signature to test the fix validator", "signatures": [{
        "id": "test-signature", "title": "A test failure", "kind": "distributed", "patterns": ["some error"],
        "source": "https://example.org/doc", "fixes": {"vllm": [fix]}}]}))
    return path


def test_container_options_and_unset_variables_validate_and_a_container_option_is_never_unset(tmp_path: Path):
    why = "a reason that is long enough"
    assert load_file(_fix_file(tmp_path, {"container": "--shm-size", "direction": "raise", "value": "1g", "why": why}))
    assert load_file(_fix_file(tmp_path, {"env": "NCCL_BUFFSIZE", "direction": "unset", "why": why}))
    with pytest.raises(CatalogError, match="unset"):
        load_file(_fix_file(tmp_path, {"container": "--shm-size", "direction": "unset", "why": why}))
    with pytest.raises(CatalogError, match="needs a value"):
        load_file(_fix_file(tmp_path, {"env": "NCCL_BUFFSIZE", "direction": "set", "why": why}))
    with pytest.raises(CatalogError, match="exactly one"):
        load_file(_fix_file(tmp_path, {"container": "--shm-size", "env": "X_Y", "direction": "raise", "value": "1",
                                       "why": why}))


def test_nccl_variables_the_text_sets_are_unset_when_nccl_fails_but_not_its_debug_switches():
    text = ("export NCCL_BUFFSIZE=33554432\nexport NCCL_DEBUG=INFO\nexport NCCL_IB_HCA=mlx5_0\n"
            "ERROR core.py:517] NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
            "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2")
    unset = {(a["engine"], a["flag"]) for a in library_env.actions(text, recognise(text)) if a["direction"] == "unset"}
    assert unset == {("vllm", "NCCL_BUFFSIZE"), ("vllm", "NCCL_IB_HCA")}
    # the same variables with no NCCL failure in the text are no suspects
    assert library_env.actions("export NCCL_BUFFSIZE=33554432\nvllm serve Qwen/Qwen3-8B", recognise("vllm serve")) == []


def test_a_crash_inside_the_engines_own_code_offers_an_upgrade_after_the_features():
    text = ("[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: "
            "mNumHeads % mTpSize == 0 (/src/tensorrt_llm/cpp/tensorrt_llm/kernels/someKernel.cu:88)")
    action = suspects.release_moves(text, recognise(text))[0]
    assert (action["engine"], action["direction"], action["value"]) == (
        "tensorrt-llm", "upgrade", None)
    assert "someKernel.cu:88" in action["why"]
    # a crash that shows no engine source, and an engine traceback that reports no crash, get no upgrade
    assert suspects.release_moves("vllm serve model\nSegmentation fault (core dumped)", recognise("vllm serve")) == []
    frame = 'File "/usr/lib/python3/site-packages/vllm/config.py", line 120, in __init__\nValueError: bad dtype'
    assert suspects.release_moves(frame, recognise(frame)) == []


def _suspected(text: str) -> set[str]:
    rec = recognise(text)
    return {a["flag"] for a in (suspects.action(s, rec) for s in suspects.suspects(text, rec)) if a is not None}


def test_a_backends_code_path_is_switched_off_by_its_variable_only_on_that_backend():
    # ggml-sycl.cpp reads GGML_SYCL_FA_ONEDNN (default 1): the oneDNN path of flash attention on the SYCL backend
    sycl = ("./build/bin/llama-server -m gemma-3-27b-it-Q4_K_M.gguf -ngl 99 -fa on\n"
            "Running with Environment Variables:\n  GGML_SYCL_DEBUG: 0\nggml_sycl_op_flash_attn\nSegmentation fault (core dumped)")
    assert "GGML_SYCL_FA_ONEDNN=0" in _suspected(sycl)
    assert "GGML_SYCL_FA_ONEDNN=0" not in _suspected(sycl.replace("SYCL", "CUDA").replace("sycl", "cuda"))
    assert "GGML_SYCL_FA_ONEDNN=0" not in _suspected(sycl.replace("-fa on", "-fa on\nexport GGML_SYCL_FA_ONEDNN=0"))


def test_an_engine_step_timeout_puts_the_all_reduce_first_only_under_tensor_parallelism():
    line = "ERROR async_llm_engine.py:676] Engine iteration timed out. This should never happen!"
    rec, matches = known_failures.match(line + "\nvllm serve Qwen/Qwen2-7B-Instruct --tensor-parallel-size 2")
    assert known_failures.actions(matches[0], rec)[0]["flag"] == "--disable-custom-all-reduce"
    rec, matches = known_failures.match(line)
    assert known_failures.actions(matches[0], rec)[0]["flag"].startswith("VLLM_ENGINE_ITERATION_TIMEOUT_S=")


def test_argparse_refusing_a_value_or_a_missing_value_names_the_flag_to_set():
    for text, key in (("vllm serve: error: argument --max-model-len: invalid int value: '8k'", "max_model_len"),
                      ("api_server.py: error: argument --tensor-parallel-size/-tp: expected one argument",
                       "tensor_parallel_size")):
        assert [(n.key, n.direction) for n in named_fixes.named(text, "vllm")] == [(key, "set")], text


def test_a_compiled_extension_of_another_torch_release_is_an_upgrade_for_sglang_too():
    text = ("ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: "
            "_ZN3c104cuda9SetDeviceEi")
    assert ("sglang", "upgrade", "upgrade") in _fixes(text)


def test_nccl_running_out_of_gpu_memory_for_its_buffers_unsets_their_size():
    text = "transport/p2p.cc:191 NCCL WARN Cuda failure 'out of memory'"
    assert ("vllm", "NCCL_BUFFSIZE", "unset") in _fixes(text)


def test_an_engine_argument_class_refusing_a_keyword_is_a_refused_flag_of_that_engine():
    # a wrapper building vLLM 0.5.0's AsyncEngineArgs with a keyword later releases added (LlamaFactory issue 6654)
    text = ("- vLLM version: 0.5.0\n    self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))\n"
            "TypeError: __init__() got an unexpected keyword argument 'limit_mm_per_prompt'")
    assert unknown_flags._refused(text) == ["--limit-mm-per-prompt"]
    assert ("vllm", "upgrade", "upgrade") in _refused(text)
    # a keyword no engine documents, with no engine recognised, is not guessed at
    assert unknown_flags.actions("TypeError: f() got an unexpected keyword argument 'colour'",
                                 recognise("TypeError: f() got an unexpected keyword argument 'colour'")) == []


def test_a_choice_the_installed_release_refuses_gets_a_conditional_upgrade():
    # vLLM 0.6.2's argparse on a tool parser 0.6.3 added (vllm-project/vllm#9312)
    text = ("running on k8s 0.6.2\napi_server.py: error: argument --tool-call-parser: invalid choice: 'llama3_json' "
            "(choose from 'mistral', 'hermes')")
    actions = unknown_flags.actions(text, recognise(text))
    assert [(a["engine"], a["direction"], a["value"]) for a in actions] == [("vllm", "upgrade", None)]
    assert "'llama3_json'" in actions[0]["why"] and "--tool-call-parser" in actions[0]["why"]


def test_an_ollama_setting_the_text_sets_is_unset_when_its_runner_dies():
    # ollama issue 14087, as pasted: OLLAMA_NUM_PARALLEL set in the service file, then the runner stopped
    text = ('Environment="OLLAMA_NUM_PARALLEL=4" in /etc/systemd/system/ollama.service\nError: 500 Internal Server '
            "Error: model runner has unexpectedly stopped, this may be due to resource limitations or an internal "
            "error, check ollama server logs for details\nOLLAMA_DEBUG=1")
    acts = library_env.actions(text, recognise(text))
    assert [(a["engine"], a["flag"], a["direction"]) for a in acts] == [("llama.cpp", "OLLAMA_NUM_PARALLEL", "unset")]
    # the same setting in a log whose runner did not die is no suspect
    assert library_env.actions('Environment="OLLAMA_NUM_PARALLEL=4"', recognise("ollama")) == []

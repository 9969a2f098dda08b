"""Diagnose on errors no signature was written for: the quantities a message compares move the engine flags that
set them (advisor.quantities), and a crash that names no cause is answered with the engine features to rule
out, most implicated first (advisor.suspects). Every text here is a real engine message (the engine's source
string or a log line from a public issue thread), and none is a signature of the failure catalog."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from advisor import known_failures, quantities, suspects
from advisor.diagnose import diagnose
from advisor.error_text import recognise
from advisor.profiles import ENGINES_DIR, ProfileError, load_profile, profiles, wrapper_deaths
from advisor.quantities import QUANTITIES_FILE, QuantityError, load_file

# vLLM vllm/config/compilation.py since #38270 (quoted in that PR).
MAMBA = ("ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (512). Each decode sequence requires "
         "one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 512 or "
         "increase gpu_memory_utilization.")


def _moves(text: str, engine: str | None = None) -> set[tuple[str, str, str]]:
    rec = recognise(text, engine_hint=engine)
    return {(a["engine"], a["flag"], a["direction"]) for a in quantities.actions(text, rec)}


def test_a_setting_that_exceeds_a_supply_is_lowered_and_the_supply_raised():
    moves = _moves(MAMBA, "vllm")
    assert ("vllm", "--max-num-seqs", "lower") in moves
    assert ("vllm", "--gpu-memory-utilization", "raise") in moves
    assert not any(direction == "raise" and flag == "--max-num-seqs" for _, flag, direction in moves)


def test_a_message_quoted_without_its_subject_lowers_what_consumes_the_supply():
    # the same message as a pull request quoted it, its first words cut off
    moves = _moves("vllm: exceeds available Mamba cache blocks (95)... CUDA graph capture cannot proceed")
    assert {("vllm", "--max-num-seqs", "lower"), ("vllm", "--max-model-len", "lower"),
            ("vllm", "--gpu-memory-utilization", "raise")} <= moves


def test_a_request_longer_than_a_configured_limit_raises_the_limit_in_each_engines_spelling():
    # SGLang python/sglang/srt/managers/tokenizer_manager.py; no engine named, so every engine's context flag
    moves = _moves("The input (85050 tokens) is longer than the model's context length (32768 tokens).")
    assert ("sglang", "--context-length", "raise") in moves and ("vllm", "--max-model-len", "raise") in moves
    assert all(direction == "raise" for *_, direction in moves)


def test_smaller_than_raises_the_left_side_and_lowers_the_right():
    moves = _moves("Value error, max_num_batched_tokens (2048) is smaller than max_model_len (8192).", "vllm")
    assert moves == {("vllm", "--max-num-batched-tokens", "raise"), ("vllm", "--max-model-len", "lower")}


def test_more_than_the_available_cache_memory_raises_the_memory_and_lowers_what_holds_it():
    # vLLM v1 vllm/v1/core/kv_cache_utils.py
    moves = _moves("ValueError: To serve at least one request with the models's max seq len (24288), (0.89 GiB KV cache "
                   "is needed, which is larger than the available KV cache memory (0.8 GiB). vllm")
    assert {("vllm", "--gpu-memory-utilization", "raise"), ("vllm", "--max-model-len", "lower")} <= moves


def test_what_is_short_is_the_word_right_after_not_enough():
    # TGI server/text_generation_server/models/flash_causal_lm.py warmup: the memory is short, not the tokens
    assert not quantities.changes("Not enough memory to handle 4096 prefill tokens. You need to decrease "
                                  "`--max-batch-prefill-tokens`")


def test_a_comparison_without_a_number_is_a_sentence_not_an_error():
    assert quantities.changes("my prompt is longer than the context length of the model") == []


def test_a_quantity_flag_the_profile_lacks_or_an_unknown_consumer_is_a_load_error(tmp_path: Path):
    data = json.loads(QUANTITIES_FILE.read_text(encoding="utf-8"))
    data["quantities"][0]["knobs"]["vllm"] = ["max_model_length"]
    path = tmp_path / "quantities.json"
    path.write_text(json.dumps(data))
    with pytest.raises(QuantityError, match="max_model_length"):
        load_file(path)
    data = json.loads(QUANTITIES_FILE.read_text(encoding="utf-8"))
    data["quantities"][0]["consumers"] = ["kv-pages"]
    path.write_text(json.dumps(data))
    with pytest.raises(QuantityError, match="kv-pages"):
        load_file(path)


def _suspected(text: str) -> list[tuple[str, str, str | None, int]]:
    rec = recognise(text)
    out = []
    for s in suspects.suspects(text, rec):
        act = suspects.action(s, rec)
        assert act is not None and act["source"].startswith("https://")
        out.append((act["engine"], act["flag"], act["value"], s.rank))
    return out


def test_a_llama_cpp_assert_rules_out_automatic_fitting_first():
    # ggml/src/ggml-backend.cpp, as quoted in llama.cpp PR #24321
    assert _suspected("llama-server GGML_ASSERT(sched) failed")[0] == (
        "llama.cpp", "--fit", "off", 3)


def test_a_feature_the_command_line_turns_on_is_the_first_suspect_and_one_it_turns_off_is_none():
    # ggml-org/llama.cpp#24457: flash attention on, automatic fitting off, ggml's abort in fattn.cu
    text = ("llama-server -m gemma-4-E4B-it-qat-UD-Q4_K_XL.gguf --model-draft mtp-gemma-4-E4B-it.gguf --spec-type "
            "draft-mtp --flash-attn on --cache-type-k q4_0 --fit off --no-warmup\n"
            "Loading model... |ggml/src/ggml-cuda/fattn.cu:110: fatal error")
    found = _suspected(text)
    assert found[0] == ("llama.cpp", "--flash-attn", "off", 0)
    assert ("llama.cpp", "--cache-type-k", "f16", 0) in found
    assert all(flag != "--fit" for _, flag, *_ in found)


def test_a_split_mode_and_a_host_kv_cache_the_command_line_turns_on_are_suspects_and_the_default_split_is_not():
    # ggml-org/llama.cpp#27757, as pasted: tensor split mode and -nkvo, ggml's assertion in fattn.cu
    text = ("build/bin/llama-completion -m model.gguf -ngl 99 -c 4096 -n 32 --temp 0 --seed 1 --no-warmup --jinja "
            "-p \"Say hello.\" -sm tensor -ts 55,45 -nkvo\n"
            "ggml/src/ggml-cuda/fattn.cu:371: GGML_ASSERT(Q->ne[2] % K->ne[2] == 0) failed")
    found = [f[:3] for f in _suspected(text)]
    assert found[:2] == [("llama.cpp", "-sm", "layer"), ("llama.cpp", "-nkvo", None)]
    # the default split by layers, and the KV cache left on the GPUs, are not suspected
    plain = _suspected("llama-server -m model.gguf -sm layer\nggml/src/ggml-cuda/fattn.cu:371: GGML_ASSERT(x) failed")
    assert all(flag not in ("-sm", "-nkvo") for _, flag, *_ in plain)


def test_a_hang_under_tensor_parallelism_suspects_the_custom_all_reduce_only_there():
    # the title of triton-inference-server/tensorrtllm_backend#390 after the system-info line of an issue form
    # (NVIDIA/TensorRT-LLM#1601 writes its release so)
    hang = "- TensorRT-LLM: v0.9.0\nTensorRT-LLM often hangs using both `tp_size 2` and `enable_context_fmha`."
    assert ("tensorrt-llm", "--use_custom_all_reduce", "disable") in [f[:3] for f in _suspected(hang)]
    assert not _suspected("- TensorRT-LLM: v0.9.0\nTensorRT-LLM often hangs on one GPU.")
    # the build flag is gone after 0.10.0, so a newer release is not told to pass it
    assert not _suspected(hang.replace("v0.9.0", "v0.12.0"))


def test_an_illegal_memory_access_while_capturing_graphs_suspects_graphs_first():
    text = ("INFO model_runner.py:1025] Capturing cudagraphs for decoding. vllm\nRuntimeError: CUDA error: an illegal "
            "memory access was encountered")
    assert _suspected(text)[0] == ("vllm", "--enforce-eager", None, 1)


def test_no_crash_and_no_feature_both_enabled_and_named_means_no_suspect():
    assert not _suspected("vllm serve m --enable-chunked-prefill\nValueError: Prompt length of 9000 is too long")
    # a sentence, not a log: the engine's default features are not guessed at
    assert not _suspected("vLLM hangs under load")


def _misspell_switch(data: dict) -> None:
    data["switches"][0]["knob"] = "fitt"


def _misspell_wrapper_setting(data: dict) -> None:
    data["wrappers"][0]["settings"]["ctx_sise"] = {"env": "OLLAMA_CONTEXT_LENGTH"}


def _spell_a_wrapper_setting_nowhere(data: dict) -> None:
    data["wrappers"][0]["settings"]["n_gpu_layers"] = {"values": {}}


def _misname_a_switchs_wrapper(data: dict) -> None:
    next(s for s in data["switches"] if s.get("wrapper") == "ollama")["wrapper"] = "olama"


def _break_a_wrappers_report_of_death(data: dict) -> None:
    data["wrappers"][0]["died"]["pattern"] = "llama runner (terminated"


@pytest.mark.parametrize("spoil, message", [
    (_misspell_switch, "fitt"),
    (_misspell_wrapper_setting, "ctx_sise"),
    (_spell_a_wrapper_setting_nowhere, "names an environment variable, an option or a flag of the wrapper"),
    (_misname_a_switchs_wrapper, "switches name wrappers the profile lacks"),
    (_break_a_wrappers_report_of_death, "does not compile"),
])
def test_a_switch_or_wrapper_the_profile_cannot_resolve_is_a_load_error(tmp_path: Path, spoil, message: str):
    data = json.loads((ENGINES_DIR / "llama.cpp.json").read_text(encoding="utf-8"))
    spoil(data)
    path = tmp_path / "llama.cpp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match=message):
        load_profile(path)


@pytest.mark.django_db
def test_a_catalogued_crash_keeps_its_signature_first_and_the_suspects_after_it():
    # llama.cpp src/llama-context.cpp: a catalogued assertion
    result = diagnose("llama_decode: GGML_ASSERT(n_tokens_all <= cparams.n_batch) failed")
    kinds = [f["kind"] for f in result["findings"]]
    assert kinds[0] == "known_failure" and "suspect" in kinds
    assert kinds.index("suspect") > 0


@pytest.mark.django_db
def test_an_uncatalogued_crash_is_answered_with_suspects_and_not_with_unrelated_techniques():
    text = "llama-server GGML_ASSERT(sched) failed"
    assert not known_failures.match(text)[1]
    result = diagnose(text)
    assert result["findings"][0]["kind"] == "suspect"
    assert all(f["technique"] != "multi_lora" for f in result["findings"])


def test_a_feature_the_engines_argument_dump_turns_on_is_the_first_suspect_of_a_crash():
    # vLLM >= 0.9 logs its non-default arguments at start-up (vllm/entrypoints/utils.py "non-default args")
    text = ("(APIServer pid=1) INFO 08-21 07:50:10 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', "
            "'speculative_config': {'method': 'eagle3', 'num_speculative_tokens': 3}}\n"
            "(EngineCore_0 pid=2) RuntimeError: CUDA error: an illegal memory access was encountered")
    assert _suspected(text)[0] == ("vllm", "--speculative-config", None, 0)
    off = _suspected(text.replace("{'method': 'eagle3', 'num_speculative_tokens': 3}", "None"))
    assert ("vllm", "--speculative-config", None, 0) not in off and off[0][1] == "--enforce-eager"


def test_a_quantity_compared_with_itself_moves_nothing():
    # vLLM vllm/config.py _get_and_verify_max_len
    assert quantities.changes("ValueError: User-specified max_model_len (4096) is greater than the derived "
                              "max_model_len (seq_length=2048 or model_max_length=None in model's config.json).") == []


def test_ggmls_abort_with_flash_attention_on_the_command_line_suspects_flash_attention_first():
    # ggml-org/llama.cpp#24400 (llama-server --flash-attn on; ggml/src/ggml-cuda/fattn.cu GGML_ABORT)
    text = ("llama-server -m gemma-4-E4B.gguf --flash-attn on\nLoading model... |/kaggle/working/llama.cpp/ggml/src/"
            "ggml-cuda/fattn.cu:110: fatal error\n/kaggle/working/llama.cpp/build/bin/libggml-base.so.0(ggml_abort+0x11f)")
    assert _suspected(text)[0] == ("llama.cpp", "--flash-attn", "off", 0)


def test_a_crash_of_no_recognised_engine_gets_only_features_its_words_name():
    # PyTorch's own lines under any CUDA fault (vllm-project/vllm#6976 quotes them): no engine, no feature named
    text = ("RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be "
            "asynchronously reported at some other API call, so the stacktrace below might be incorrect.")
    assert recognise(text).engine is None and not _suspected(text)
    assert {f[1] for f in _suspected(text + "\nCapturing CUDA graph shapes")} == {"--enforce-eager",
                                                                                 "--disable-cuda-graph", "--cuda-graphs"}


def test_a_bare_python_assertion_in_an_engine_is_a_crash_and_its_words_pick_the_feature():
    # an SGLang report's stack trace and its own words for where the assertion fails (SWARadixCache.dec_lock_ref)
    text = ("[TP5 EP5] Scheduler hit an exception: Traceback (most recent call last):\n  File \".../managers/"
            "scheduler.py\", line 3027, in run_scheduler_process\n    scheduler.event_loop_overlap()\nAssertionError\n"
            "an assertion failure inside `SWARadixCache.dec_lock_ref`")
    assert recognise(text).engine == "sglang"
    assert _suspected(text)[0] == ("sglang", "--disable-radix-cache", None, 1)


def test_an_sglang_worker_that_died_in_graph_capture_is_a_crash_that_suspects_graphs():
    # SGLang's frame for a dead worker (managers/tp_worker.py at 0.3.1.post2: "Exception in run_tp_server:"), its
    # traceback cut after the capture call, with no exception line of its own
    text = ("[TP0] Capture cuda graph begin. This can take up to several minutes.\n[TP4] Exception in run_tp_server:\n"
            "Traceback (most recent call last):\n  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/"
            "cuda_graph_runner.py\", line 147, in __init__\n    self.capture()")
    assert suspects.crashed(text)
    assert _suspected(text)[0][:2] == ("sglang", "--disable-cuda-graph")
    moves = suspects.release_moves(text, recognise(text))
    assert [m["direction"] for m in moves] == ["upgrade", "downgrade"]


def test_an_sglang_crash_that_names_its_attention_kernels_suspects_the_attention_backend_first():
    text = ("[TP0] Scheduler hit an exception: Traceback (most recent call last):\n  File \"/sgl-workspace/sglang/"
            "python/sglang/srt/layers/attention/flashinfer_backend.py\", line 412, in forward_decode\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert _suspected(text)[0] == ("sglang", "--attention-backend", "triton", 1)
    # the portable kernels already chosen are ruled out
    assert ("sglang", "--attention-backend", "triton", 0) not in _suspected("--attention-backend triton\n" + text)
    assert all(s[1] != "--attention-backend" for s in _suspected("--attention-backend triton\n" + text))


def test_vllms_dead_engine_core_is_a_crash_whose_default_features_are_ruled_out():
    # vLLM V1's EngineDeadError (vllm/v1/engine/exceptions.py), pasted without the stack trace it points to
    text = ("(APIServer pid=1) ERROR [async_llm.py:704] vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
            "encountered an issue. See stack trace (above) for the root cause.")
    assert suspects.crashed(text)
    assert _suspected(text)[0][:2] == ("vllm", "--enforce-eager")


def test_ggmls_cuda_check_abort_is_a_crash_that_rules_out_cuda_graphs():
    # ggml_cuda_error (ggml/src/ggml-cuda/ggml-cuda.cu) prints the CUDA error, then GGML_ABORT("CUDA error"); as
    # pasted from llama.cpp issue 24174 (version 9197, an RTX 5070)
    text = ("version: 9197 (fcae601e4)\nDevice 0: NVIDIA GeForce RTX 5070, compute capability 12.0, VMM: yes, "
            "VRAM: 11771 MiB\nggml/src/ggml-cuda/ggml-cuda.cu:102: CUDA error")
    assert suspects.crashed(text)
    assert ("llama.cpp", "GGML_CUDA_DISABLE_GRAPHS=1", "1", 3) in _suspected(text)
    # the backend's graphs are no suspect where no CUDA or HIP backend runs
    assert all(flag != "GGML_CUDA_DISABLE_GRAPHS=1" for _, flag, _, _ in
               _suspected("llama-server -m m.gguf\nggml/src/ggml-vulkan/ggml-vulkan.cpp:5012: fatal error"))


def test_a_crash_that_names_cuda_graphs_suspects_them_before_the_defaults():
    text = "llama-server: ggml-cuda.cu:2640: CUDA error during cudaGraphLaunch: an illegal memory access was encountered"
    assert _suspected(text)[0] == ("llama.cpp", "GGML_CUDA_DISABLE_GRAPHS=1", "1", 1)


@pytest.mark.django_db
def test_ollamas_runner_that_exited_is_a_llama_cpp_crash_answered_with_ollamas_release_moves_last():
    # ollama llm/server.go: "llama runner process has terminated: %w" (ollama issue 7031, as pasted)
    text = "Error: llama runner process has terminated: exit status 0xc0000409"
    rec = recognise(text)
    assert rec.engine == "llama.cpp" and suspects.crashed(text)
    moves = suspects.release_moves(text, rec)
    assert [m["direction"] for m in moves] == ["upgrade", "downgrade"]
    # on the answer, the upgrade then the downgrade close the suspects, and each moves ollama's release (it ships its
    # own llama.cpp), not llama.cpp's
    suspect = next(f for f in diagnose(text)["findings"] if f["kind"] == "suspect")
    assert [(a["direction"], a.get("target")) for a in suspect["actions"][-2:]] == [("upgrade", "ollama"),
                                                                                    ("downgrade", "ollama")]
    assert "newer ollama release" in suspect["actions"][-2]["why"]
    assert diagnose(text)["recognised"]["wrapper"] == "ollama"
    assert diagnose("llama-server -m m.gguf\nGGML_ASSERT(n > 0) failed")["recognised"]["wrapper"] is None


def test_a_crash_in_the_engines_own_code_also_offers_the_release_before_the_one_the_text_runs():
    # vLLM's V0 worker crashing in its own code (vllm issue 1518's frame), with the release in the text
    text = ('vllm 0.2.1 File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 120, in execute_model\n'
            "RuntimeError: CUDA error: an illegal memory access was encountered")
    rec = recognise(text)
    down = suspects.release_moves(text, rec)[-1]
    assert down["direction"] == "downgrade" and "the release before 0.2.1" in down["why"]
    # the same crash outside the engine's code gets neither move
    outside = 'File "serve.py", line 3, in main\nRuntimeError: CUDA error: an illegal memory access was encountered vllm'
    assert suspects.release_moves(outside, recognise(outside)) == []


def test_vllms_shared_memory_broadcast_warning_is_a_hung_multi_gpu_worker():
    # vllm/distributed/device_communicators/shm_broadcast.py's warning, as pasted (1CatAI/1Cat-vLLM#652)
    text = "(EngineCore pid=...) INFO [shm_broadcast.py:705] No available shared memory broadcast block found in 60 seconds"
    rec = recognise(text)
    assert rec.engine == "vllm" and rec.tensor_parallel and suspects.crashed(text)
    assert ("vllm", "--disable-custom-all-reduce") in [s[:2] for s in _suspected(text)]


@pytest.mark.parametrize("text", [
    # ollama running llama-server itself (llm/llama_server.go at fb30760)
    "Error: 500 Internal Server Error: llama-server process has terminated: exit status 2",
    # ollama's health check of a runner that exited (llm/server.go at v0.5.7)
    "Error: llama runner process no longer running: -1 CUDA error: an illegal memory access was encountered",
    # ollama's request to its runner when the runner's connection drops (llm/server.go, "POST predict: %v")
    'Error: POST predict: Post "http://127.0.0.1:34567/completion": EOF',
    # the log line of ollama's monitor of its runner process (llm/server.go, monitorProcess)
    'time=2026-03-11T17:42:09.504-04:00 level=ERROR source=server.go:304 msg="llama runner terminated" error="exit status 1"',
    # ollama 0.15 (ollama issue 14087, as pasted)
    "Error: 500 Internal Server Error: model runner has unexpectedly stopped, this may be due to resource limitations "
    "or an internal error, check ollama server logs for details",
    # LM Studio's llama.cpp runtime (lmstudio-bug-tracker issue 1204)
    "Failed to load the model\n\nError loading model.\n\n(Exit code: 18446744072635812000). Unknown error. Try a "
    "different model and/or config.",
    # LM Studio's runtime aborting while loading (lmstudio-bug-tracker issue 394) and crashing while serving (1050)
    "LM Studio 0.3.9\n(Exit code: 134). Please check settings and try loading the model again.",
    'LM Studio API error 400: {"error":"The model has crashed without additional information. (Exit code: null)"}',
    # llama.cpp's 2023 assertion macro (ggml-org/llama.cpp#903, as pasted)
    "llama_model_load_internal: n_layer = 40\nLLAMA_ASSERT: D:\\a\\llama.cpp\\llama.cpp\\llama.cpp:830: false",
    # a Go panic in ollama's own runner (ollama/ollama#12113, as pasted)
    "panic: failed to sample token: sample: logits sum to NaN, check model output\n\ngoroutine 89 [running]:\n"
    "github.com/ollama/ollama/runner/ollamarunner.(*Server).run(0xc0002d30e0)\n"
    "        github.com/ollama/ollama/runner/ollamarunner/runner.go:375 +0x6a",
    # ggml's assertion names no file (llama.cpp issue 13461)
    "GGML_ASSERT(cur_p->size > 0) failed, or gibberish on DeepSeek V3 0324 (Q2_K_XL), CUDA + CPU",
    # ggml-cuda.cu at the tree's top, before the 2024 move into ggml/src (llama.cpp issue 8117)
    "CUDA error: unspecified launch failure\n  current device: 0, in function ggml_cuda_op_mul_mat at "
    "/XXX/llama.cpp/ggml-cuda.cu:1606\nGGML_ASSERT: /XXX/llama.cpp/ggml-cuda.cu:100: !\"CUDA error\"",
])
def test_a_llama_cpp_runner_or_ggml_stopping_with_no_cause_is_a_crash_answered_with_an_upgrade(text: str):
    rec = recognise(text)
    assert rec.engine == "llama.cpp" and suspects.crashed(text)
    moves = suspects.release_moves(text, rec)
    assert moves and moves[0]["direction"] == "upgrade" and moves[0]["engine"] == "llama.cpp"


def test_tgis_console_script_at_the_top_of_a_shard_traceback_is_its_own_code():
    # TGI's shard error as the launcher logs it, quotes escaped (text-generation-inference issue 43)
    text = ('ERROR shard-manager: text_generation_launcher: "Method Generate encountered an error. Traceback (most '
            'recent call last): File \\"/home/user/.conda/envs/s/bin/text-generation-server\\", line 8, in <module>')
    rec = recognise(text)
    assert rec.engine == "tgi" and suspects.crashed(text)
    assert suspects.release_moves(text, rec)[0]["direction"] == "upgrade"


def test_a_python_programming_error_inside_the_engines_code_is_an_engine_bug_answered_with_an_upgrade():
    text = ('File "/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py", line 1220, in execute_model\n'
            "AttributeError: 'NoneType' object has no attribute 'shape'")
    rec = recognise(text)
    assert not suspects.crashed(text) and suspects.release_moves(text, rec)[0]["direction"] == "upgrade"
    # the same exception in the person's own script is no engine bug
    own = 'File "serve.py", line 12, in main\nAttributeError: \'NoneType\' object has no attribute \'shape\' vllm'
    assert suspects.release_moves(own, recognise(own)) == []


def test_tensorrt_llms_console_script_at_the_top_of_a_traceback_is_its_own_code():
    # trtllm-build raising a programming error (NVIDIA/TensorRT-LLM#1766, as pasted)
    text = ('Traceback (most recent call last):\n  File "/usr/local/bin/trtllm-build", line 8, in <module>\n'
            "    sys.exit(main())\nAttributeError: 'PretrainedConfig' object has no attribute 'ffn_hidden_size'")
    rec = recognise(text)
    assert rec.engine == "tensorrt-llm" and suspects.release_moves(text, rec)[0]["direction"] == "upgrade"


def test_a_module_the_engines_own_code_imports_and_lacks_is_a_packaging_bug_of_that_release():
    # TGI's ROCm image importing flashinfer (huggingface/text-generation-inference#2522, as pasted)
    text = ('  File "/opt/conda/lib/python3.11/site-packages/text_generation_server/layers/attention/flashinfer.py", '
            "line 5, in <module>\n    import flashinfer\nModuleNotFoundError: No module named 'flashinfer'")
    rec = recognise(text)
    assert rec.engine == "tgi"
    assert [m["direction"] for m in suspects.release_moves(text, rec)] == ["upgrade", "downgrade"]


def test_a_kernel_trap_in_ollamas_runner_is_a_llama_cpp_crash_in_its_own_code():
    # the Linux kernel's log of an illegal instruction in ollama's runner (ollama/ollama#1372, as pasted)
    text = ("[247685.858191] traps: ollama-runner[16373] trap invalid opcode ip:5012fc sp:7ffd01fd2090 error:0 in "
            "ollama-runner[408000+163000]")
    rec = recognise(text)
    assert rec.engine == "llama.cpp" and suspects.crashed(text)
    assert [m["direction"] for m in suspects.release_moves(text, rec)][-1:] == ["downgrade"]


@pytest.mark.django_db
def test_llama_cpp_pythons_frames_name_it_as_the_wrapper_to_move_and_its_settings():
    # llama-cpp-python failing to load a model (liltom-eth/llama2-webui#67, as pasted)
    text = ('Traceback (most recent call last):\n  File "C:\\Python311\\Lib\\site-packages\\llama_cpp\\llama.py", '
            "line 323, in __init__\n    assert self.model is not None\nAssertionError")
    result = diagnose(text)
    assert result["recognised"]["engine"] == "llama.cpp" and result["recognised"]["wrapper"] == "llama-cpp-python"
    moves = [(a["direction"], a.get("target")) for f in result["findings"] for a in f["actions"]
             if a["direction"] in ("upgrade", "downgrade")]
    assert ("upgrade", "llama-cpp-python") in moves and ("downgrade", "llama-cpp-python") in moves
    # a context-window fix in its text gets the server's variable (docs/server.md: every option is also a variable)
    full = diagnose("llama_cpp/llama.py ValueError: Requested tokens (3000) exceed context window of 2048")
    flags = [a["flag"] for f in full["findings"] for a in f["actions"]]
    assert any(f.startswith("N_CTX") for f in flags), flags


def test_each_wrappers_report_of_the_engines_death_lives_once_in_its_profile():
    # the same wordings serve recognition, the crash pattern and the wrapper's settings; none is spelt twice
    for eng in profiles().values():
        for wrapper in eng.wrappers:
            if wrapper.died is None:
                continue
            for wording in wrapper.died.pattern.split("|"):
                assert wording not in wrapper.requires.split("|"), (wrapper.name, wording)
            assert wrapper.died.pattern in wrapper_deaths(eng.id) and wrapper.died.pattern in wrapper_deaths()
    assert re.search(wrapper_deaths("vllm"), "llama runner process has terminated") is None


@pytest.mark.django_db
def test_lm_studios_dead_runtime_moves_its_llama_cpp_runtime_and_its_context_is_lms_loads_flag():
    # lmstudio-bug-tracker issue 1204, as pasted: LM Studio updates its llama.cpp runtimes apart from the app
    text = ("LM Studio 0.3.31 (Build 7), Windows 11\nFailed to load the model\n\nError loading model.\n\n(Exit code: "
            "18446744072635812000). Unknown error. Try a different model and/or config.")
    result = diagnose(text)
    assert result["recognised"]["engine"] == "llama.cpp" and result["recognised"]["wrapper"] == "LM Studio"
    moves = [(a["direction"], a.get("target")) for f in result["findings"] for a in f["actions"]
             if a["direction"] in ("upgrade", "downgrade")]
    assert ("upgrade", "LM Studio's llama.cpp runtime") in moves
    assert ("downgrade", "LM Studio's llama.cpp runtime") in moves
    # a context the KV cache cannot hold, loaded through LM Studio's CLI (docs/cli/load: --context-length)
    full = diagnose("lms load qwen3 --context-length 32768\nllama_init_from_model: failed to allocate KV cache: "
                    "cudaMalloc failed: out of memory")
    flags = [a["flag"] for a in full["findings"][0]["actions"]]
    assert flags.index("--context-length") == flags.index("--ctx-size") + 1, flags


@pytest.mark.django_db
def test_ollamas_memory_guess_lowers_the_offload_as_ollamas_num_gpu_option():
    # ollama 0.1.x when its runner's output ended early (ollama/ollama#1566, as pasted)
    result = diagnose("Error: llama runner exited, you may not have enough available memory to run this model")
    actions = [(a["flag"], a["direction"], a.get("applies_to")) for a in result["findings"][0]["actions"]]
    assert actions[:2] == [("-ngl", "lower", None), ("num_gpu", "lower", "ollama")]
    # the context has both of ollama's spellings: its variable and the model's option
    assert ("num_ctx", "lower", "ollama") in actions and any(f.startswith("OLLAMA_CONTEXT_LENGTH") for f, _, _ in actions)


def test_tensorrt_llms_own_assertion_report_is_its_own_code():
    # TLLM_CHECK's report (NVIDIA/TensorRT-LLM#1279, path cut off as pasted)
    text = "[TensorRT-LLM][ERROR] Encountered an error in forward function: [TensorRT-LLM][ERROR] Assertion failed: freeBlockIterator.has_value()"
    rec = recognise(text)
    assert rec.engine == "tensorrt-llm" and suspects.release_moves(text, rec)[0]["direction"] == "upgrade"


def test_an_ollama_crash_rules_out_the_flash_attention_ollama_turns_on_by_default():
    # ollama issue 18276, as pasted (Windows abort status 0xc0000409)
    text = ("ollama run qwen3-coder:30b terminates with exit status 0xc0000409 on an RTX 5070 Ti Laptop (Blackwell, "
            "sm_120). The error surfaces as CUDA error: shared object initialization failed")
    assert suspects.crashed(text)
    assert ("llama.cpp", "OLLAMA_FLASH_ATTENTION=0", "0", 3) in _suspected(text)
    # plain llama.cpp, no ollama: ollama's variable is no suspect
    assert all(not flag.startswith("OLLAMA_") for _, flag, _, _ in
               _suspected("llama-server -m m.gguf\nggml/src/ggml-cuda/ggml-cuda.cu:84: CUDA error"))


@pytest.mark.django_db
def test_an_ollama_users_fixes_are_also_spelt_as_ollamas_variables():
    # ollama's runner out of device memory while allocating the KV cache (as ollama logs llama.cpp's lines)
    text = ("ollama run qwen2.5:32b\nllama_kv_cache_init: CUDA0 KV buffer size = 8192.00 MiB\n"
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out "
            "of memory\nError: llama runner process has terminated: exit status 2")
    result = diagnose(text)
    actions = [a for f in result["findings"] for a in f["actions"]]
    flags = [a["flag"] for a in actions]
    assert "--ctx-size" in flags and "OLLAMA_CONTEXT_LENGTH" in flags
    assert flags.index("OLLAMA_CONTEXT_LENGTH") == flags.index("--ctx-size") + 1
    twin = actions[flags.index("OLLAMA_CONTEXT_LENGTH")]
    assert twin["applies_to"] == "ollama" and twin["direction"] == "lower" and "ollama" in twin["source"]
    # the same error from llama-server itself keeps the engine's own spelling only
    plain = diagnose(text.replace("ollama run qwen2.5:32b\n", "").replace(
        "Error: llama runner process has terminated: exit status 2", "llama-server exited"))
    assert not any(a["flag"].startswith("OLLAMA_") for f in plain["findings"] for a in f["actions"])


@pytest.mark.django_db
def test_a_gpu_the_text_names_but_the_catalog_lacks_is_asked_for_by_its_capability_not_its_name():
    text = "1x NVIDIA GeForce RTX 5070 Ti (16 GB); cudaMalloc failed: out of memory / failed to allocate compute pp buffers"
    rec = recognise(text)
    assert rec.gpu_text == "RTX 5070 Ti" and rec.compute_capability is None  # named, but not in the GPU list
    result = diagnose(text)
    assert "the GPU model" not in result["missing"]
    assert any("compute capability of the RTX 5070 Ti" in m for m in result["missing"])
    # a text with no GPU still asks for the model
    assert "the GPU model" in diagnose("llama-server: cudaMalloc failed: out of memory")["missing"]


@pytest.mark.django_db
def test_a_library_an_engine_module_cannot_import_from_gets_the_engine_upgrade_or_the_library_moved_back():
    # sgl-project/sglang#194 as pasted on a forum, its quotes turned typographic
    text = ("File \u201c/home/u/sglang/python/sglang/srt/constrained/__init__.py\u201d, line 4, in <module>\n"
            "    from outlines.fsm.json_schema import build_regex_from_object\n"
            "ImportError: cannot import name \u2018build_regex_from_object\u2019 from \u2018outlines.fsm.json_schema\u2019")
    result = diagnose(text)
    moves = [(a["engine"], a["direction"], a.get("target")) for a in result["findings"][0]["actions"]]
    assert moves == [("sglang", "upgrade", None), ("sglang", "downgrade", "outlines")]


@pytest.mark.django_db
def test_a_long_stretch_of_a_catalogued_message_is_answered_fix_first_even_without_log_markers():
    # the pydantic form of newer vLLM configs (juejin.cn post 7543299461236244489, as pasted)
    text = ("vllm serve /models/ilama-3.2-1B --gpu-memory-utilization 0.8\n"
            "Value error, The repository /models/ilama-3.2-1B contains custom code which must be executed to "
            "correctly load the model.")
    first = diagnose(text)["findings"][0]
    assert first["signature"] == "trust-remote-code-required"
    # a sentence that uses a few words of an error keeps the literature first
    sentence = diagnose("CUDA out of memory with many concurrent requests")
    assert sentence["findings"] and sentence["findings"][0].get("signature") is None


@pytest.mark.django_db
def test_a_library_move_is_offered_only_when_the_matched_message_names_the_library():
    # vLLM's troubleshooting wording names no library: the engine upgrade alone
    result = diagnose("ERROR: Model architectures ['Qwen2ForCausalLM'] failed to be inspected. Please check the logs "
                      "for more details. vllm")
    finding = next(f for f in result["findings"] if f.get("signature") == "library-lacks-name-the-engine-imports")
    assert [(a["engine"], a["direction"], a.get("target")) for a in finding["actions"]] == [("vllm", "upgrade", None)]


@pytest.mark.django_db
def test_a_koboldcpp_log_gets_the_batch_size_in_koboldcpps_own_flag_and_the_release_to_move_is_koboldcpps():
    # LostRuins/koboldcpp#331, as pasted: a 2023 build's scratch pool, sized for batches of 512
    text = ("Processing Prompt [BLAS] (7168 / 7321 tokens)ggml_new_tensor_impl: not enough space in the scratch memory "
            "pool (needed 1279262720, available 1197473792)")
    actions = diagnose(text)["findings"][0]["actions"]
    spelt = [(a["flag"], a["direction"], a.get("value"), a.get("target")) for a in actions]
    assert spelt[:2] == [("--batch-size", "lower", "512", None), ("--blasbatchsize", "lower", "512", None)]
    assert ("upgrade", "upgrade", None, "koboldcpp") in spelt

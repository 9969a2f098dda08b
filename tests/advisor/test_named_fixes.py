"""Fixes an error names itself: the settings a message asks to change, read from the engines' own error
strings (quoted from their sources) in any spelling the engine profiles know, with the direction its verb
gives and the flag spelt for the recognised engine — while a command line echoed in the log, or a
comparison ("is smaller than max_model_len"), is not read as advice."""
from __future__ import annotations

import pytest

from advisor.diagnose import diagnose
from advisor.error_text import recognise
from advisor.named_fixes import actions, named

# vllm/config.py (SchedulerConfig._verify_args, v0.4-v0.6): the check on the batch token budget.
VLLM_BUDGET = ("ValueError: max_num_batched_tokens (2048) is smaller than max_model_len (4096). This effectively limits "
               "the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please "
               "increase max_num_batched_tokens or decrease max_model_len.")
# vllm/core/scheduler.py (v0.4-v0.6): the preemption warning.
VLLM_PREEMPTED = ("WARNING scheduler.py:1089] Sequence group 3 is preempted by PreemptionMode.RECOMPUTE mode because "
                  "there is not enough KV cache space. This can affect the end-to-end performance. Increase "
                  "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory.")
# text_generation_server/models/flash_causal_lm.py (TGI v1-v3): warmup out of memory.
TGI_PREFILL = ("RuntimeError: Not enough memory to handle 8192 prefill tokens. "
               "You need to decrease `--max-batch-prefill-tokens`")
# sglang/srt/mem_cache/memory_pool.py: the KV pool does not fit.
SGLANG_POOL = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
# vllm-gaudi hpu bucketing (vllm_hpu_extension/bucketing.py): a message the failure catalog does not hold.
HPU_BUCKETS = ("Modifying bucket minimum: bs:[1, 32, 64], seq:[128, 128, 1024] cannot be used with specified "
               "max_num_batched_tokens (2048), as the smallest bucket (4096) would exceed token budget. Please increase "
               "max_num_batched_tokens or decrease bucket minimum. Ignoring max_num_batched_tokens at risk of "
               "out-of-memory errors. vllm 0.6.4")


def _asked(text: str, engine: str | None) -> list[tuple[str | None, str | None, str]]:
    return [(n.engine, n.key, n.direction) for n in named(text, engine)]


def test_each_setting_takes_the_direction_of_its_own_verb_not_of_a_comparison():
    assert _asked(VLLM_BUDGET, "vllm") == [("vllm", "max_num_batched_tokens", "raise"), ("vllm", "max_model_len", "lower")]


def test_a_stated_comparison_raises_the_smaller_side_and_a_requirement_points_where_it_says():
    # vllm/config.py SchedulerConfig (v0.6): the same check stated without its advice sentence.
    assert _asked("ValueError: max_num_batched_tokens (2048) is smaller than max_model_len (8192).", "vllm") == [
        ("vllm", "max_num_batched_tokens", "raise"), ("vllm", "max_model_len", "lower")]
    # vllm/engine/llm_engine.py (v0.6): "Make sure that `max_model_len` is no smaller than the number of text tokens."
    assert _asked("The decoder prompt (length 44) is longer than the maximum model length of 16. Make sure that "
                  "`max_model_len` is no smaller than the number of text tokens.", "vllm") == [
        ("vllm", "max_model_len", "raise")]
    # TGI launcher/src/main.rs (v2): a requirement between two launcher options.
    assert _asked("`max_batch_prefill_tokens` must be >= `max_input_tokens`. Given: 4096 and 8191", "tgi") == [
        ("tgi", "max_batch_prefill_tokens", "raise"), ("tgi", "max_input_length", "lower")]


def test_a_setting_written_in_words_is_read_like_its_flag():
    # vllm/worker/worker.py (v0.6.4): the start-up memory check.
    text = ("ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory "
            "utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.")
    assert _asked(text, "vllm") == [("vllm", "gpu_memory_utilization", "lower")]


def test_a_verb_governs_every_setting_joined_to_it_by_or():
    assert _asked(VLLM_PREEMPTED, "vllm") == [("vllm", "gpu_memory_utilization", "raise"),
                                               ("vllm", "tensor_parallel_size", "raise")]


def test_a_launcher_flag_in_backticks_is_read_with_its_dashes():
    assert _asked(TGI_PREFILL, "tgi") == [("tgi", "max_batch_prefill_tokens", "lower")]


def test_an_engine_flag_names_its_engine_when_the_text_names_none():
    assert _asked(SGLANG_POOL, None) == [("sglang", "gpu_memory_utilization", "raise")]


def test_a_key_several_engines_share_goes_to_the_engine_that_spells_its_flag_so():
    text = "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
    assert _asked(text, None) == [("vllm", "gpu_memory_utilization", "raise"), ("vllm", "max_model_len", "lower")]


def test_another_engines_option_name_is_answered_with_the_recognised_engines_flag():
    flags = [(a["flag"], a["direction"]) for a in actions(VLLM_PREEMPTED, recognise("sglang " + VLLM_PREEMPTED))]
    assert flags == [("--mem-fraction-static", "raise"), ("--tp", "raise")]


def test_an_environment_variable_the_message_asks_for_keeps_its_value():
    text = "NCCL error: unhandled system error. If the GPUs lack peer access, try setting NCCL_P2P_DISABLE=1."
    assert [(a["flag"], a["direction"]) for a in actions(text, recognise(text))] == [("NCCL_P2P_DISABLE=1", "set")]


def test_a_switch_named_to_disable_something_is_set_not_unset():
    text = "Custom allreduce failed. You can disable custom all-reduce with --disable-custom-all-reduce."
    assert _asked(text, "vllm") == [("vllm", "disable_custom_all_reduce", "set")]


def test_the_command_line_echoed_in_a_log_is_not_advice():
    text = ("python -m vllm.entrypoints.openai.api_server --max-model-len 8192 --gpu-memory-utilization 0.9 "
            "--tensor-parallel-size 2\nKeyError: 'model.layers.0.mlp.weight' NCCL_DEBUG=INFO")
    assert named(text, "vllm") == []


def test_a_plain_word_that_is_also_an_option_name_needs_to_be_written_as_an_option():
    assert named("Increase the parallel degree of your tensor parallel setup.", "llama.cpp") == []
    assert _asked("try raising --parallel to 4", "llama.cpp") == [("llama.cpp", "max_num_seqs", "raise")]


@pytest.mark.django_db
def test_a_message_the_catalog_lacks_is_answered_first_with_the_fix_it_names():
    result = diagnose(HPU_BUCKETS)
    assert result["recognised"]["failures"] == []
    top = result["findings"][0]
    assert top["kind"] == "named_fix" and result["answered"] is True
    assert [(a["engine"], a["flag"], a["direction"]) for a in top["actions"]] == [
        ("vllm", "--max-num-batched-tokens", "raise")]


@pytest.mark.django_db
def test_a_named_fix_follows_the_catalogued_failure_and_repeats_none_of_its_actions():
    result = diagnose(SGLANG_POOL + " Then try adding --disable-cuda-graph.")
    kinds = [f["kind"] for f in result["findings"]]
    assert kinds[:2] == ["known_failure", "named_fix"]
    assert [a["flag"] for a in result["findings"][1]["actions"]] == ["--disable-cuda-graph"]


# vllm/v1/core/encoder_cache_manager.py (compute_encoder_budget): the batch token budget below one multimodal item.
VLLM_MM_BUDGET = ("ValueError: Chunked MM input disabled but max_tokens_per_mm_item (2496) is larger than "
                  "max_num_batched_tokens (2048). Please increase max_num_batched_tokens.")
# TGI launcher (clap): a boolean flag given in Python's spelling.
TGI_CLAP = ("error: invalid value 'True' for '--disable-custom-kernels'\n  [possible values: true, false]\n\n"
            "  tip: a similar value exists: 'true'")
# vLLM / SGLang (argparse): a choice the option does not offer.
VLLM_ARGPARSE = ("vllm serve: error: argument --kv-cache-dtype: invalid choice: 'fp8e4m3' "
                 "(choose from 'auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3')")


def test_a_comparison_on_the_setting_outranks_an_unrelated_verb_earlier_in_the_clause():
    assert _asked(VLLM_MM_BUDGET, "vllm") == [("vllm", "max_num_batched_tokens", "raise")]


def test_a_value_the_launcher_rejects_names_its_flag_to_set_with_the_value_it_suggests():
    found = named(TGI_CLAP, "tgi")
    assert [(n.engine, n.key, n.direction, n.value) for n in found] == [("tgi", "disable_custom_kernels", "set", "true")]
    assert _asked(VLLM_ARGPARSE, "vllm") == [("vllm", "kv_cache_dtype", "set")]


def test_a_flag_the_message_says_something_requires_is_to_be_set():
    # tools/server/utils.hpp (llama.cpp): tools in a request without the Jinja template engine.
    assert _asked("tools param requires --jinja flag", "llama.cpp") == [("llama.cpp", "jinja", "set")]


def test_a_flag_this_release_renamed_is_answered_with_the_name_the_launcher_suggests():
    # TGI launcher (clap) 2.x given the 1.x flag name.
    text = ("error: unexpected argument '--max-input-length' found\n\n  tip: a similar argument exists: "
            "'--max-input-tokens'")
    assert _asked(text, "tgi") == [("tgi", "max_input_length", "set")]


def test_a_setting_that_exceeds_a_limit_is_lowered_and_a_setting_exceeded_is_raised():
    # vllm/v1/core/... (Mamba models): more sequences than cache blocks; the opposite side is the limit to raise.
    assert _asked("ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (614).", "vllm") == [
        ("vllm", "max_num_seqs", "lower")]
    assert _asked("The prompt (9000 tokens) exceeds max_model_len.", "vllm") == [("vllm", "max_model_len", "raise")]


def test_a_setting_said_to_clash_with_another_feature_is_switched_off():
    assert _asked("llama_lora_adapter_set: flash_attn is not compatible with LoRA", "llama.cpp") == [
        ("llama.cpp", "flash_attn", "unset")]
    assert _asked("--enable-chunked-prefill cannot be used with prefix caching now.", "vllm") == [
        ("vllm", "enable_chunked_prefill", "unset")]


def test_llama_cpps_own_argument_error_names_the_flag_to_set():
    # common/arg.cpp: the parser's error for a flag given without the value it now takes.
    text = ('error while handling argument "--flash-attn": expected value for argument\n\nusage:\n'
            "-fa,   --flash-attn [on|off|auto]       set Flash Attention use ('on', 'off', or 'auto', default: 'auto')")
    assert ("llama.cpp", "flash_attn", "set") in _asked(text, "llama.cpp")


def test_a_wrappers_own_variable_the_message_asks_for_is_set():
    # ollama (llm/server.go at v0.5.7) when its temporary directory is mounted noexec
    text = ("Error: unable to start server fork/exec /tmp/ollama1/runners/cuda_v12/ollama_llama_server: permission "
            "denied.  /tmp/ollama1/runners/cuda_v12/ollama_llama_server may have noexec set.  Set OLLAMA_TMPDIR for "
            "server to a writable executable directory")
    assert [(n.written, n.direction) for n in named(text, "llama.cpp")] == [("OLLAMA_TMPDIR", "set")]


def test_a_field_pydantic_refused_in_an_engine_config_names_the_flag_to_set():
    # PrimeIntellect-ai/verifiers#105, as pasted: a wrapper passed None to vLLM's config (pydantic dataclasses)
    text = ("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\nenforce_eager\n"
            "  Input should be a valid boolean [type=bool_type, input_value=None, input_type=NoneType]")
    assert _asked(text, "vllm") == [("vllm", "enforce_eager", "set")]
    # a model-level refusal names no field: its own words are read instead
    assert _asked("1 validation error for SchedulerConfig\n  Value error, something is wrong", "vllm") == []


def test_a_flag_written_as_its_documented_alias_is_read_and_answered_with_the_aliases_listed():
    text = "Not enough VRAM: try lowering --n-gpu-layers."
    assert _asked(text, "llama.cpp") == [("llama.cpp", "n_gpu_layers", "lower")]
    act = actions(text, recognise(text))[0]
    assert act["flag"] == "-ngl" and {"--n-gpu-layers", "--gpu-layers", "LLAMA_ARG_N_GPU_LAYERS"} <= set(act["aliases"])


def test_sglangs_capture_advice_to_stop_using_torch_compile_unsets_the_switch():
    # python/sglang/srt/model_executor/cuda_graph_runner.py: the possible solutions of a failed capture.
    text = ("Exception: Capture cuda graph failed: CUDA error Possible solutions: 1. set --mem-fraction-static to a "
            "smaller value (e.g., 0.8 or 0.7) 2. set --cuda-graph-max-bs to a smaller value (e.g., 16) 3. disable "
            "torch compile by not using --enable-torch-compile 4. disable cuda graph by --disable-cuda-graph.")
    assert ("sglang", "enable_torch_compile", "unset") in _asked(text, "sglang")


def test_a_feature_written_in_words_that_clashes_with_another_is_switched_off_by_its_own_switch():
    # vllm-openvino / vllm config checks: two features that cannot run together.
    assert _asked("RuntimeError('chunked prefill cannot be used with prefix caching now.')", "vllm") == [
        ("vllm", "enable_chunked_prefill", "unset")]
    assert _asked("custom all-reduce is not supported with more than 8 GPUs", "sglang") == [
        ("sglang", "disable_custom_all_reduce", "set")]
    assert _asked("Chunked prefill is enabled; prefix caching is on.", "vllm") == []


def test_a_directive_word_inside_a_settings_own_name_is_no_directive():
    # TensorRT-LLM's gptSessionBenchmark check: "remove" in remove_input_padding asks nothing of max_num_tokens
    text = ("[TensorRT-LLM][ERROR] Assertion failed: The engine is built with remove_input_padding=True and "
            "max_num_tokens=128, while trying to benchmark on 8192 tokens")
    assert [n for n in named(text, recognise(text).engine) if n.direction == "unset"] == []
    assert [(n.key, n.direction) for n in named("Please remove max_num_tokens=128 from the build", "tensorrt-llm")] == [
        ("max_num_tokens", "unset")]

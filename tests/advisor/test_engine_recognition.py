"""Which engine a pasted log comes from, read from the engine's own naming: module paths in a traceback,
launcher and binary names, log prefixes and C/C++ symbols — and, where two engines are named, the one with
the stronger evidence (a vLLM traceback that loads a GGUF file is vLLM's)."""
from __future__ import annotations

import pytest

from advisor.error_text import engine_of, looks_like_a_log

LOGS = [
    ('File "/usr/local/lib/python3.10/site-packages/vllm/worker/worker.py", line 150, in determine_num_available_blocks',
     "vllm"),
    ("(VllmWorkerProcess pid=1234) ERROR multiproc_worker_utils.py:226] Exception in worker", "vllm"),
    ("[2024-10-01 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):", "sglang"),
    ('File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 92', "sglang"),
    ("2024-05-01T10:00:00.000000Z ERROR text_generation_launcher: Shard 0 failed to start", "tgi"),
    ("2024-05-01T10:00:00.000000Z ERROR shard-manager: text_generation_server.cli: Error when initializing model", "tgi"),
    ("2024-05-01T10:00:00Z  WARN text_generation_router: router/src/main.rs:372: Inferred max batch total tokens", "tgi"),
    ("[TensorRT-LLM][ERROR] Assertion failed: Input length (2048) + max new tokens (512) > max sequence length", "tensorrt-llm"),
    ("trtllm-build --checkpoint_dir ./ckpt --output_dir ./engine --gemm_plugin auto", "tensorrt-llm"),
    ("llm_load_tensors: offloaded 33/33 layers to GPU\nllama_new_context_with_model: n_ctx = 4096", "llama.cpp"),
    ("./llama-server -m model.gguf -c 8192 -ngl 99", "llama.cpp"),
    ("ggml/src/ggml-cuda.cu:70: CUDA error", "llama.cpp"),
    ('File "/opt/venv/lib/python3.11/site-packages/vllm/model_executor/model_loader/loader.py": gguf file has no '
     "tokenizer", "vllm"),
    # Wrappers and forks that keep the engine's own class and module names.
    ('File "/opt/conda/lib/python3.10/site-packages/verl/workers/rollout/llm_engine.py", line 348, in __init__',
     "vllm"),
    ("ERROR 05-06 06:47:41 [core.py:396] AsyncLLM output_handler failed.", "vllm"),
    ("RuntimeError: LLMEngine should not be pickled!", "vllm"),
    ("Internal: unexpected error when creating modelInstanceState: TrtGptModelInflightBatching requires GPT attention",
     "tensorrt-llm"),
    ("/app/tensorrt_llm/benchmarks/cpp/gptSessionBenchmark --engine_dir ./engine", "tensorrt-llm"),
    ("llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'llama4'",
     "llama.cpp"),
    # Wrappers read as the engine they embed: a library only that engine loads, or the wrapper's own runner.
    ("[torch_memory_saver.cpp] CUresult error: 2 (out of memory) file=csrc/utils.h func=cu_mem_create line=187", "sglang"),
    ("Error: llama runner process has terminated: exit status 2", "llama.cpp"),
    ("ollama serve: time=2025-01-01 level=ERROR msg=\"failed to load model\"", "llama.cpp"),
    ("koboldcpp.py: Load Text Model OK: False", "llama.cpp"),
    # ollama's gin access log of its own API (server/routes.go)
    ('[GIN] 2024/05/10 - 22:52:42 | 500 |    2.7650401s |       127.0.0.1 | POST     "/api/chat"', "llama.cpp"),
    # LM Studio's report of a runtime that died, with nothing else of the engine in it
    ("(Exit code: 18446744072635812000). Unknown error. Try a different model and/or config.", "llama.cpp"),
    ("(APIServer pid=1) ERROR 09-01 10:00:00 [serving_chat.py:222] Error in preprocessing prompt inputs", "vllm"),
    ("(RayWorkerWrapper pid=5123) ERROR worker_base.py:467] Error executing method determine_num_available_blocks",
     "vllm"),
    ("[2025-06-01 10:00:00 DP0 TP0 EP0] Scheduler hit an exception: Traceback (most recent call last):", "sglang"),
    ("common_init_from_params: failed to create context with model 'model.gguf'", "llama.cpp"),
    ("print_info: file type   = Q4_K - Medium\nload_tensors: offloading 32 repeating layers to GPU", "llama.cpp"),
    ('File "/app/aphrodite/engine/aphrodite_engine.py", line 300, in _init_cache', "vllm"),
    ("File \"/usr/lib/python3/site-packages/optimum/nvidia/models/auto.py\", line 80, in from_pretrained", "tensorrt-llm"),
    # TGI's router reaches its shards through its own client crate; its max_input_length is not TensorRT-LLM's
    # max_input_len
    ("ERROR warmup{max_input_length=1024 max_prefill_tokens=4096}:warmup: text_generation_client: "
     "router/client/src/lib.rs:33: Server error: CUDA out of memory", "tgi"),
    # process and source names of a log prefix: vLLM's V1 worker processes, TGI's Rust router in a panic, TensorRT-LLM's
    # batch manager parameter as Triton's backend reports it
    ("(Worker_TP1 pid=15193) ERROR 05-08 19:06:38 [multiproc_executor.py:962] CUDA kernel errors might be "
     "asynchronously reported at some other API call", "vllm"),
    ("thread 'main' panicked at router/src/infer.rs:324:14:", "tgi"),
    ("E1028 18:34:33.926976 4434 backend_model.cc:634] ERROR: Failed to create instance: unexpected error when creating "
     "modelInstanceState: maxTokensInPagedKvCache must be large enough to process at least 1 sequence", "tensorrt-llm"),
]


@pytest.mark.parametrize(("text", "engine"), LOGS)
def test_the_engine_is_read_from_its_own_names_in_the_log(text: str, engine: str):
    assert engine_of(text) == engine


def test_text_that_names_no_engine_is_left_unrecognised():
    assert engine_of("RuntimeError: CUDA error: an illegal memory access was encountered") is None


@pytest.mark.parametrize("text", [
    "[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=103",
    "cudaErrorStreamCaptureUnsupported - operation not permitted when stream is capturing",
    "CUDA_ERROR_OUT_OF_MEMORY while mapping the KV cache",
    "CUDA error: out of memory",  # the CUDA runtime's own prefix, as torch's and ggml's checks print it
    "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",  # ggml-cuda.cu's init
])
def test_a_source_file_or_a_cuda_error_code_marks_pasted_output(text: str):
    assert looks_like_a_log(text)


def test_a_sentence_about_a_symptom_is_not_a_log():
    assert not looks_like_a_log("CUDA out of memory with many concurrent requests")
    assert not looks_like_a_log("a CUDA error: the server runs out of memory with many requests")

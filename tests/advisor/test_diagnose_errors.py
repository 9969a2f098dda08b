"""Diagnose on pasted errors: every catalogued failure is recognised from a real error string (the
engine's own message, as printed in an issue thread or as its source formats it) and answered with its
fix first — the flag as the release spells it, the number worked out from the text — while the
failure catalog refuses a misspelt flag and the literature only follows the fix."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from advisor import failures, known_failures, profiles
from advisor.diagnose import diagnose
from advisor.error_text import recognise
from advisor.failures import CatalogError, load_file
from advisor.versions import at_least
from benchmarks.diagnose import ERROR_SPLITS, ERRORS, error_hit

# One real error string per signature, and a fix (engine, flag, direction) its answer must contain.
EXAMPLES: dict[str, tuple[str, tuple[str, str, str]]] = {
    "vllm-kv-cache-below-max-model-len": (
        "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in "
        "KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        ("vllm", "--max-model-len", "lower")),
    "llamacpp-fit-probe-context-failed": (
        "0.01.004.979 E common_fit_params: encountered an error while trying to fit params to free device memory: failed "
        "to create llama_context from model", ("llama.cpp", "--fit", "set")),
    # weaviate/Verba#150, as an OpenAI-compatible server returned it
    "chat-template-refuses-role-order": (
        '{"object":"error","message":"Conversation roles must alternate user/assistant/user/assistant/...",'
        '"type":"BadRequestError","param":null,"code":400}', ("vllm", "--chat-template", "set")),
    # ggml-org/llama.cpp#2691, as pasted
    "llamacpp-ggml-memory-pool-exhausted": (
        "ggml_new_tensor_impl: not enough space in the context's memory pool (needed 35007776, available 12582912)",
        ("llama.cpp", "--batch-size", "lower")),
    # ollama's wording of its runner's "unknown model" (llm/server.go at v0.3.6, as a user sees it)
    "ollama-model-needs-newer-ollama": (
        "Error: this model is not supported by your version of Ollama. You may need to upgrade",
        ("llama.cpp", "upgrade", "upgrade")),
    # ollama's scheduler (server/sched.go at v0.5.7, ErrMaxQueue), as a client receives it
    "ollama-request-queue-full": (
        'Error: {"error":"server busy, please try again.  maximum pending requests exceeded"} ollama',
        ("llama.cpp", "OLLAMA_MAX_QUEUE=<requests, above the default 512>", "raise")),
    # ollama's gin access log of a browser's preflight from another machine (ollama/ollama#8788, as pasted)
    "ollama-request-forbidden": (
        '[GIN] 2025/02/03 - 21:25:38 | 200 |    2.090666ms |       127.0.0.1 | GET      "/api/tags"\n'
        '[GIN] 2025/02/03 - 21:25:54 | 403 |     422.708µs |    192.168.1.40 | OPTIONS  "/api/tags"',
        ("llama.cpp", "OLLAMA_ORIGINS=<the origin of the page calling ollama>", "set")),
    # the CUDA runtime's cudaErrorNoDevice, as ggml's CUDA init prints it
    "no-gpu-visible-to-the-process": (
        "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
        ("llama.cpp", "--gpus", "set")),
    # the CUDA runtime's cudaErrorInsufficientDriver, as torch's CUDA check prints it
    "cuda-driver-older-than-runtime": (
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        ("vllm", "upgrade", "upgrade")),
    "vllm-no-memory-for-cache-blocks": (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        ("vllm", "--gpu-memory-utilization", "raise")),
    "vllm-bfloat16-needs-sm80": (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB "
        "GPU has compute capability 7.0.", ("vllm", "--dtype", "set")),
    "vllm-batched-tokens-below-max-model-len": (
        "ValidationError: 1 validation error for SchedulerConfig Value error, max_num_batched_tokens (8192) is smaller than "
        "max_model_len (131072).", ("vllm", "--max-num-batched-tokens", "raise")),
    "vllm-heads-not-divisible-by-tp": (
        "Total number of attention heads (40) must be divisible by tensor parallel size (6).",
        ("vllm", "--tensor-parallel-size", "set")),
    "vllm-prompt-longer-than-max-model-len": (
        "ValueError: The decoder prompt (length 44) is longer than the maximum model length of 16. Make sure that "
        "`max_model_len` is no smaller than the number of text tokens.", ("vllm", "--max-model-len", "raise")),
    "vllm-xformers-softcap": (
        "File ~/anaconda3/envs/autorag/lib/python3.10/site-packages/vllm/attention/backends/xformers.py:422 "
        "ValueError: XFormers does not support attention logits soft capping.",
        ("vllm", "VLLM_ATTENTION_BACKEND=FLASHINFER", "set")),
    "vllm-preempted": (
        "WARNING scheduler.py:1057] Sequence group 0 is preempted by PreemptionMode.RECOMPUTE mode because there is not "
        "enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or "
        "tensor_parallel_size to provide more KV cache memory.", ("vllm", "--gpu-memory-utilization", "raise")),
    "vllm-quantization-needs-newer-gpu": (
        "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
        ("vllm", "--quantization", "set")),
    "vllm-architecture-not-supported": (
        "ValueError: Model architectures ['MllamaForConditionalGeneration'] are not supported for now. Supported "
        "architectures: ['AquilaModel', 'AquilaForCausalLM']", ("vllm", "upgrade", "upgrade")),
    "vllm-free-memory-below-utilization": (
        "ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory "
        "utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        ("vllm", "--gpu-memory-utilization", "lower")),
    "vllm-marlin-kernel-available": (
        "WARNING awq_marlin.py:97] Detected that the model can run with awq_marlin, however you specified "
        "quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference",
        ("vllm", "--quantization", "set")),
    "sglang-not-enough-memory-for-kv-pool": (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        ("sglang", "--mem-fraction-static", "raise")),
    "sglang-cuda-graph-capture-failed": (
        "File \"/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/cuda_graph_runner.py\", line 239, in "
        "__init__ raise Exception( Exception: Capture cuda graph failed: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
        "Connection closed by peer", ("sglang", "--disable-cuda-graph", "set")),
    "sglang-input-longer-than-context": (
        "ValueError: The input (85050 tokens) is longer than the model's context length (32768 tokens).",
        ("sglang", "--context-length", "raise")),
    "sglang-input-exceeds-kv-pool": (
        "sglang [Error]Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens).",
        ("sglang", "--mem-fraction-static", "raise")),
    "sglang-flashinfer-on-pre-ampere": (
        "python3 -m sglang.launch_server --model Qwen/Qwen1.5-4B-Chat\nGPU 0: Tesla T4\nGPU 0 Compute Capability: 7.5\n"
        "flashinfer: 0.1.3\nIndexError: map::at", ("sglang", "--attention-backend", "set")),
    "tgi-prefill-tokens-do-not-fit": (
        "Error: Warmup(Generation(\"Not enough memory to handle 4096 prefill tokens. You need to decrease "
        "`--max-batch-prefill-tokens`\"))", ("tgi", "--max-batch-prefill-tokens", "lower")),
    "tgi-total-tokens-do-not-fit": (
        "Not enough memory to handle 16000 total tokens with 2 prefill tokens. You need to decrease "
        "`--max-batch-total-tokens` or `--max-batch-prefill-tokens", ("tgi", "--max-batch-total-tokens", "lower")),
    "tgi-max-total-tokens-do-not-fit": (
        "text-generation-launcher: Not enough memory to handle `max_total_tokens=16000`",
        ("tgi", "--max-total-tokens", "lower")),
    "tgi-inputs-plus-new-tokens-over-total": (
        "huggingface_hub.errors.ValidationError: Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32512.",
        ("tgi", "--max-total-tokens", "raise")),
    "tgi-max-new-tokens-over-room": (
        "tgi `1.1.0` MAX_INPUT_LENGTH: 4095 MAX_TOTAL_TOKENS: 4096 it complains that `max_new_tokens` must be <= 1",
        ("tgi", "--max-input-length", "lower")),
    "tgi-input-limit-not-below-total": (
        "text-generation-launcher Error: ArgumentValidation(\"`max_input_length` must be < `max_total_tokens`\")",
        ("tgi", "--max-input-tokens", "lower")),
    "tgi-sharded-needs-flash-attention": (
        "NotImplementedError: Sharded Llama requires Flash Attention enabled models.", ("tgi", "upgrade", "upgrade")),
    "llamacpp-v-cache-quantization-needs-flash-attn": (
        "llama_new_context_with_model: V cache quantization requires flash_attn\ncommon_init_from_params: failed to "
        "create context with model", ("llama.cpp", "-fa", "set")),
    "llamacpp-unknown-architecture": (
        "llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'gemma4'",
        ("llama.cpp", "upgrade", "upgrade")),
    "llamacpp-kv-cache-full": (
        "srv    send_error: task id = 2017, error: the request exceeds the available context size. try increasing the "
        "context size or enable context shift", ("llama.cpp", "--ctx-size", "raise")),
    "llamacpp-allocation-failed": (
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 204800.00 MiB on device 0: cudaMalloc failed: out of "
        "memory\nllama_kv_cache_init: failed to allocate buffer for kv cache", ("llama.cpp", "--ctx-size", "lower")),
    "trtllm-fmha-unsupported-architecture": (
        "Tesla V100-SXM2-32GB [TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture "
        "(/src/tensorrt_llm/cpp/tensorrt_llm/kernels/contextFusedMultiHeadAttention/fmhaRunner.cpp:87)",
        ("tensorrt-llm", "--context_fmha", "unset")),
    "trtllm-fp8-fmha-architecture": (
        "what():  [TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled except on Ada or Hopper or "
        "Blackwell Arch. (/code/tensorrt_llm/cpp/tensorrt_llm/common/attentionOp.cpp:2357)",
        ("tensorrt-llm", "--use_fp8_context_fmha", "unset")),
    "trtllm-paged-context-fmha-volta": (
        "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: PagedKV "
        "Context FMHA is not supported on Volta", ("tensorrt-llm", "--use_paged_context_fmha", "unset")),
    "trtllm-input-beyond-engine-profile": (
        "ValueError: The sum of prompt length (9351.0), query length (0) should not exceed max_num_tokens (8192) "
        "tensorrt_llm/llmapi/llm.py(583): _check_arguments", ("tensorrt-llm", "--max_num_tokens", "raise")),
    "trtllm-kv-cache-takes-free-memory": (
        "[TensorRT-LLM][INFO] Allocate 69524783104 bytes for k/v cache.",
        ("tensorrt-llm", "--kv_cache_free_gpu_memory_fraction", "lower")),
    "cuda-out-of-memory": (
        "Error initializing vLLM engine: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacty of "
        "44.35 GiB of which 53.38 MiB is free.", ("vllm", "--gpu-memory-utilization", "lower")),
    "nccl-watchdog-timeout": (
        "(RayWorkerVllm pid=409241) [E ProcessGroupNCCL.cpp:474] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800762 milliseconds "
        "before timing out.", ("vllm", "--disable-custom-all-reduce", "set")),
    "flash-attention-needs-ampere": (
        "text-generation-launcher RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
        ("tgi", "USE_FLASH_ATTENTION=False", "set")),
    "vllm-max-model-len-over-derived": (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig Value error, User-specified "
        "max_model_len (65536) is greater than the derived max_model_len (max_position_embeddings=32768.0 or "
        "model_max_length=None in model's config.json). To allow overriding this maximum, set the env var "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.", ("vllm", "--max-model-len", "lower")),
    "vllm-more-gpus-than-available": (
        "WARNING 02-02 19:54:20 ray_utils.py:315] The number of required GPUs exceeds the total number of available "
        "GPUs in the placement group.", ("vllm", "--tensor-parallel-size", "lower")),
    "chat-template-missing": (
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'As of transformers v4.44, default chat "
        "template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.' vllm",
        ("vllm", "--chat-template", "set")),
    "trust-remote-code-required": (
        "sglang ValueError: Loading moonshotai/Kimi-K2.5 requires you to execute the configuration file in that repo on "
        "your local machine. Make sure you have read the code there to avoid malicious use, then set the option "
        "`trust_remote_code=True` to remove this error.", ("sglang", "--trust-remote-code", "set")),
    "tgi-prefill-tokens-below-max-input": (
        "Error: ArgumentValidation(\"`max_batch_prefill_tokens` must be >= `max_input_tokens`. Given: 4096 and 8191\")",
        ("tgi", "--max-batch-prefill-tokens", "raise")),
    "llamacpp-context-below-training": (
        "llama_new_context_with_model: n_ctx_per_seq (4096) < n_ctx_train (131072) -- the full capacity of the model "
        "will not be utilized", ("llama.cpp", "--ctx-size", "raise")),
    "sglang-kv-pool-full-retract": (
        "[2024-11-05 16:06:07 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: "
        "0.0980 -> 0.3487", ("sglang", "--mem-fraction-static", "raise")),
    "trtllm-prompt-beyond-max-seq-len": (
        "ValueError: Deduced max_tokens -12 is less than 0, becauseprompt length 8200 plus query length 0 is larger than "
        "max_seq_len 8188", ("tensorrt-llm", "--max_seq_len", "raise")),
    "quantization-differs-from-model-config": (
        "ValueError: Quantization method specified in the model config (gptq) does not match the quantization method "
        "specified in the `quantization` argument (gptq_marlin). vllm 0.5.4", ("vllm", "--quantization", "set")),
    "vllm-dtype-unsupported-by-quantization": (
        'File "/work/vllm-github/vllm/model_executor/model_loader.py", line 84, in get_model raise ValueError( '
        "ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]",
        ("vllm", "--dtype", "set")),
    "cuda-graph-capture-unsupported-operation": (
        "File \"/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py\", line 1426, in capture_model "
        "RuntimeError: CUDA error: operation not permitted when stream is capturing",
        ("vllm", "--enforce-eager", "set")),
    "cublas-handle-or-allocation-failed": (
        "vllm 0.6.3 RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
        ("vllm", "--gpu-memory-utilization", "lower")),
    "gpu-peer-access-unsupported": (
        "[TensorRT-LLM][ERROR] CUDA runtime error in error: peer access is not supported between these two devices",
        ("tensorrt-llm", "--use_custom_all_reduce", "set")),
    "custom-all-reduce-kernel-failed": (
        "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'invalid argument'",
        ("vllm", "--disable-custom-all-reduce", "set")),
    "gloo-cannot-connect": (
        "[2025-01-30 18:11:28 TP14] Init torch distributed begin. [rank10]:[E130 18:11:34.707542570 ProcessGroupGloo.cpp:143] "
        "Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
        ("sglang", "GLOO_SOCKET_IFNAME=<interface that reaches the other nodes>", "set")),
    "cuda-reinit-in-forked-process": (
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the "
        "'spawn' start method", ("vllm", "VLLM_WORKER_MULTIPROC_METHOD=spawn", "set")),
    "triton-fp8e4nv-unsupported": (
        "(EngineCore pid=333) ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
        "('fp8e4b15', 'fp8e5')\")", ("vllm", "--kv-cache-dtype", "set")),
    "rocm-no-code-object-for-gpu": (
        "ggml_cuda_init: found 1 ROCm devices :1:hip_fatbin.cpp :687 : 114369963532 us:  No compatible code objects found "
        "for: gfx1152, value of HIP_FORCE_SPIRV_CODEOBJECT: 0",
        ("llama.cpp", "HSA_OVERRIDE_GFX_VERSION=<major.minor.step of the nearest supported gfx target>", "set")),
    "quantized-weight-name-unknown": (
        "File \"/usr/local/lib/python3.10/dist-packages/vllm/model_executor/models/llama.py\", line 497, in load_weights "
        "param = params_dict[name] KeyError: 'model.layers.0.mlp.down_proj.qweight'", ("vllm", "--quantization", "set")),
    "cuda-graph-capture-crashed": (
        "File \"/home/tiger/.pyenv/versions/3.11.2/lib/python3.11/site-packages/vllm/worker/model_runner.py\", line 1679, "
        "in capture output_hidden_or_intermediate_states = self.model(", ("vllm", "--enforce-eager", "set")),
    "llamacpp-tools-need-jinja": (
        '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}',
        ("llama.cpp", "--jinja", "set")),
    "llamacpp-jinja-template-failed": (
        "srv          init: init: please consider disabling jinja via --no-jinja, or use a custom chat template via "
        "--chat-template", ("llama.cpp", "--jinja", "unset")),
    "vllm-cpu-swap-space-exhausted": (
        "RuntimeError: Aborted due to the lack of CPU swap space. Please increase the swap space to avoid this error.",
        ("vllm", "--swap-space", "raise")),
    "tgi-inputs-over-max-input": (
        "text-generation-inference ValidationError: Input validation error: `inputs` must have less than 1024 tokens. "
        "Given: 1168.", ("tgi", "--max-input-tokens", "raise")),
    "trtllm-inflight-batching-needs-packed-paged": (
        "UNAVAILABLE: Internal: unexpected error when creating modelInstanceState: TrtGptModelInflightBatching requires GPT "
        "attention plugin with packed input and paged KV cache.", ("tensorrt-llm", "--paged_kv_cache", "set")),
    "trtllm-block-reuse-needs-paged-context-fmha": (
        "[TensorRT-LLM][ERROR] Assertion failed: When KV cache block reuse is set, model has to be built with paged "
        "context FMHA support", ("tensorrt-llm", "--use_paged_context_fmha", "set")),
    "request-longer-than-served-context": (
        "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"This model's maximum context length is "
        "4096 tokens. However, you requested 4245 tokens (3221 in the messages, 1024 in the completion). Please reduce "
        "the length of the messages or completion.\"", ("vllm", "--max-model-len", "raise")),
    "hf-gated-or-private-repo": (
        "huggingface_hub.errors.GatedRepoError: 401 Client Error. Cannot access gated repo for url "
        "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json. Access to model "
        "meta-llama/Meta-Llama-3-8B-Instruct is restricted. You must be authenticated to access it.",
        ("vllm", "HF_TOKEN=<a token of an account granted access>", "set")),
    "port-already-in-use": (
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
        ("vllm", "--port", "set")),
    "transformers-does-not-know-architecture": (
        "ValueError: The checkpoint you are trying to load has model type `qwen3` but Transformers does not recognize "
        "this architecture. This could be because of an issue with the checkpoint, or because your version of "
        "Transformers is out of date.", ("vllm", "upgrade", "upgrade")),
    "nccl-communication-error": (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled "
        "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5 ncclSystemError: System call (e.g. "
        "socket, malloc) or external library call failed or device error.", ("vllm", "NCCL_P2P_DISABLE=1", "set")),
    "sglang-prefill-out-of-memory": (
        "[2025-03-01 10:02:11 TP0] Scheduler hit an exception: RuntimeError: Prefill out of memory. Try to lower your "
        "batch size.", ("sglang", "--chunked-prefill-size", "lower")),
    "vllm-memory-profiling-disturbed": (
        "AssertionError: Error in memory profiling. Initial free memory 23.1 GiB, current free memory 24.3 GiB. This "
        "happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.",
        ("vllm", "--gpu-memory-utilization", "lower")),
    "llamacpp-input-beyond-physical-batch": (
        '{"error":{"code":500,"message":"input (11257 tokens) is too large to process. increase the physical batch size '
        '(current batch size: 8192)","type":"server_error"}}', ("llama.cpp", "--ubatch-size", "raise")),
    "trtllm-lora-rank-over-max": (
        "[TensorRT-LLM][ERROR] Assertion failed: Invalid low_rank (1024). low_rank must be smaller than mMaxLowRank (64)",
        ("tensorrt-llm", "--max_lora_rank", "raise")),
    "llamacpp-batch-size-exceeded": (
        "common/common.cpp:1070: GGML_ASSERT(batch.seq_id[batch.n_tokens] && \"llama_batch size exceeded\") failed",
        ("llama.cpp", "--batch-size", "raise")),
    "torch-compile-failed": (
        'File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 280, in capture\n'
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: "
        "invalid device context", ("sglang", "--enable-torch-compile", "unset")),
    "split-not-divisible-by-tensor-parallel": (
        "ValueError: `num_heads` must be divisible by `num_shards` (got `num_heads`: 40 and `num_shards`: 3)",
        ("tgi", "--num-shard", "set")),
    "shared-memory-too-small": (
        "include/shm.h:28 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-vzIpS6 (size 9637888)\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled "
        "system error", ("vllm", "NCCL_SHM_DISABLE=1", "set")),
    "llamacpp-kv-type-block-does-not-divide-head": (
        "llama.cpp\\src\\llama.cpp:20117: llama_new_context_with_model: n_seq_max     = 1\n"
        "GGML_ASSERT(hparams.n_embd_head_k % ggml_blck_size(type_k) == 0) failed", ("llama.cpp", "--cache-type-k", "set")),
    "vllm-lora-rank-over-max": (
        "ValueError: LoRA rank 32 is greater than max_lora_rank 16.", ("vllm", "--max-lora-rank", "raise")),
    "vllm-mm-items-over-limit": (
        "BadRequestError: Error code: 400 - {'object': 'error', 'message': 'At most 1 image(s) may be provided in one "
        "request.', 'type': 'BadRequestError', 'param': None, 'code': 400}", ("vllm", "--limit-mm-per-prompt", "raise")),
    "vllm-auto-tool-choice-needs-parser": (
        '400 {"error": {"message": "\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be '
        'set"}}', ("vllm", "--tool-call-parser", "set")),
    "llamacpp-model-file-newer-than-build": (
        "llama_model_load: error loading model: done_getting_tensors: wrong number of tensors; expected 81, got 58",
        ("llama.cpp", "upgrade", "upgrade")),
    "llamacpp-mmap-failed": (
        "llama_model_load: error loading model: mmap failed: Cannot allocate memory", ("llama.cpp", "--no-mmap", "set")),
    "invalid-device-ordinal": (
        "(VllmWorkerProcess pid=2077) ERROR RuntimeError: CUDA error: invalid device ordinal",
        ("vllm", "--tensor-parallel-size", "lower")),
    "vllm-profile-run-crashed": (
        'File "/usr/local/lib/python3.10/dist-packages/vllm/executor/gpu_executor.py", line 114, in '
        "determine_num_available_blocks return self.driver_worker.determine_num_available_blocks()",
        ("vllm", "--max-num-seqs", "lower")),
    "sglang-architecture-not-supported": (
        "[2025-02-11 TP0] Scheduler hit an exception: ValueError: Model architectures ['Qwen2_5_VLForConditionalGeneration'] "
        "are not supported for now. Supported architectures: dict_keys(['LlamaForCausalLM'])",
        ("sglang", "upgrade", "upgrade")),
    "vllm-v1-feature-unsupported": (
        "NotImplementedError: VLLM_USE_V1=1 is not supported with --enable-prompt-adapter. vllm 0.8.4",
        ("vllm", "VLLM_USE_V1=0", "set")),
    "vllm-v1-engine-used-as-v0": (  # FastChat's vLLM worker on vLLM 0.8 (lm-sys/FastChat#3704)
        'File "/p/FastChat/fastchat/serve/vllm_worker.py", line 57, in __init__ self.tokenizer = '
        "llm_engine.engine.tokenizer AttributeError: 'AsyncLLM' object has no attribute 'engine'",
        ("vllm", "VLLM_USE_V1=0", "set")),
    "engine-class-already-in-transformers": (  # SGLang 0.4.4.post1 with a transformers that ships Qwen2.5-VL
        "start Google Gemma3 with SGLang 0.4.4.post1: ValueError: '<class "
        "'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' is already used by a Transformers model.",
        ("sglang", "upgrade", "upgrade")),
    "ollama-runner-load-timed-out": (  # ollama issue 8470, as pasted
        "ollama._types.ResponseError: timed out waiting for llama runner to start - progress 0.00 -",
        ("llama.cpp", "OLLAMA_LOAD_TIMEOUT=15m", "raise")),
    "quantized-shape-not-divisible-by-tp": (
        "vllm serve Qwen/Qwen2.5-VL-72B-Instruct-AWQ --tensor-parallel-size 4 ValueError: The input size is not aligned "
        "with the quantized weight shape. This can be caused by too large tensor parallel size.",
        ("vllm", "--tensor-parallel-size", "lower")),
    "vllm-unknown-quantization-method": (
        "ValueError: Unknown quantization method: compressed-tensors. Must be one of ['aqlm', 'awq', 'fp8', 'gptq']. "
        "vllm 0.5.0", ("vllm", "upgrade", "upgrade")),
    "no-kernel-image-for-gpu": (
        "(EngineCore_DP0 pid=311) RuntimeError: CUDA error: no kernel image is available for execution on the device "
        "NVIDIA GeForce RTX 5090", ("vllm", "upgrade", "upgrade")),
    # llama-server's SLT_WRN format (examples/server/server.cpp, update_slots)
    "llamacpp-prompt-truncated-to-context": (
        "slot update_slots: id  0 | task 12 | input truncated, n_ctx = 4096, n_keep = 0, n_left = 4096, "
        "n_prompt_tokens = 2048", ("llama.cpp", "--ctx-size", "raise")),
    # llama_decode_internal's assert (llama.cpp b3xxx)
    "llamacpp-decode-beyond-logical-batch": (
        "GGML_ASSERT: /src/llama.cpp/src/llama.cpp:17100: n_tokens_all <= cparams.n_batch",
        ("llama.cpp", "--batch-size", "raise")),
    # vllm/core/scheduler.py at v0.6.0, as Python prints the failed assert
    "vllm-scheduler-assertion-under-async-output": (
        'File "/usr/lib/python3.10/site-packages/vllm/core/scheduler.py", line 1200, in _get_num_new_tokens '
        "assert num_new_tokens > 0 AssertionError", ("vllm", "--disable-async-output-proc", "set")),
    # vllm/distributed/device_communicators/shm_broadcast.py's warning
    "vllm-engine-stopped-answering": (
        "WARNING 10-01 12:00:00 shm_broadcast.py:396] No available shared memory broadcast block found in 60 second.",
        ("vllm", "NCCL_P2P_DISABLE=1", "set")),
    # benchmarks/cpp/gptSessionBenchmark.cpp's TLLM_CHECK_WITH_INFO
    "trtllm-step-beyond-max-num-tokens": (
        "[TensorRT-LLM][ERROR] Assertion failed: The engine is built with remove_input_padding=True and "
        "max_num_tokens=2048, while trying to benchmark on 4096 tokens", ("tensorrt-llm", "--max_num_tokens", "raise")),
    # benchmarks/python/gpt_benchmark.py's length check
    "trtllm-lengths-beyond-built-limits": (
        "[WARNING] check inlen(1024) <= max_inlen(512) and outlen(128) <= max_outlen(1024) failed, skipping.",
        ("tensorrt-llm", "--max_input_len", "raise")),
    # ollama's llm/server.go, before it starts llama.cpp's runner
    "llamacpp-wrapper-model-exceeds-system-memory": (
        "Error: model requires more system memory (12.3 GiB) than is available (8.0 GiB)",
        ("llama.cpp", "--ctx-size", "lower")),
    # tensorrt_llm/_torch/pyexecutor/py_executor_creator.py's _ExecutorMemoryMonitor
    "trtllm-executor-creation-out-of-memory": (
        "RuntimeError: Executor creation failed due to insufficient GPU memory. The following component could not be "
        "created: KV cache Total GPU memory (GiB): 79.11", ("tensorrt-llm", "--kv_cache_free_gpu_memory_fraction", "lower")),
    # NCCL's ibvwrap.cc, under vLLM (vllm-project/vllm#19613)
    "nccl-memory-registration-failed": (
        "[2025-06-16 17:17:39] kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with "
        "error Cannot allocate memory", ("vllm", "NCCL_BUFFSIZE", "unset")),
    # huggingface_hub's file_download.py (http_get)
    "hf-transfer-download-failed": (
        "RuntimeError: An error occurred while downloading using `hf_transfer`. Consider disabling "
        "HF_HUB_ENABLE_HF_TRANSFER for better error handling.", ("tgi", "HF_HUB_ENABLE_HF_TRANSFER=0", "set")),
    # the dynamic linker loading vLLM's compiled ops (vllm-project/vllm#3528)
    # the Triton backend built by another TensorRT-LLM release (tensorrtllm_backend#662, as pasted)
    "shared-library-undefined-symbol": (
        "UNAVAILABLE: Not found: unable to load shared library: /opt/tritonserver/backends/tensorrtllm/"
        "libtriton_tensorrtllm.so: undefined symbol: _ZNK12tensorrt_llm8executor8Response11getErrorMsgB5cxx11Ev",
        ("tensorrt-llm", "upgrade", "upgrade")),
    # a transformers processor called by vLLM's model code with arguments of another release (zai-org/GLM-V#8)
    "transformers-api-mismatch": (
        "TypeError: Glm4vProcessor.__init__() got multiple values for argument 'tokenizer'", ("vllm", "upgrade", "upgrade")),
    # TensorRT's engine deserialisation under the Triton backend (triton-inference-server/tensorrtllm_backend#531)
    # triton-inference-server/tensorrtllm_backend#66: the plain Triton 23.10 image
    "trtllm-triton-image-without-trtllm-backend": (
        "failed to load 'tensorrt_llm' version 2: Invalid argument: unable to find 'tensorrtllm/model.py' for model "
        "'tensorrt_llm', in /opt/tritonserver/backends/tensorrtllm", ("tensorrt-llm", "upgrade", "upgrade")),
    "trtllm-engine-from-another-release": (
        "[TensorRT-LLM][ERROR] 1: [stdArchiveReader.cpp::StdArchiveReader::42] Error Code 1: Serialization (Serialization "
        "assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 228, "
        "Serialized Engine Version: 237)", ("tensorrt-llm", "upgrade", "upgrade")),
    # vLLM's serving_engine.py (_check_model), as the OpenAI client prints the 404 body (QwenLM/Qwen3#87)
    "vllm-requested-model-not-served": (
        '{"object":"error","message":"The model `Qwen/Qwen1.5-7B-Chat` does not exist.","type":"NotFoundError",'
        '"param":null,"code":404}', ("vllm", "--served-model-name", "set")),
    # vLLM's async_llm_engine.py (run_engine_loop) under tensor parallelism
    "vllm-engine-iteration-timeout": (
        "ERROR 10-30 21:15:12 async_llm_engine.py:676] Engine iteration timed out. This should never happen!\n"
        "vllm serve Qwen/Qwen2-VL-7B-Instruct --tensor-parallel-size 2",
        ("vllm", "VLLM_ENGINE_ITERATION_TIMEOUT_S=<seconds, above the default 60>", "raise")),
    # vLLM's multiprocessing/client.py, the API server waiting on its engine process
    "vllm-rpc-server-did-not-reply": (
        "TimeoutError: Server didn't reply within 10000 ms", ("vllm", "VLLM_RPC_TIMEOUT=<milliseconds, above the default 10000>", "raise")),
    # transformers' utils/hub.py (cached_file) with no route to huggingface.co
    "hf-hub-unreachable": (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files "
        "and it looks like meta-llama/Llama-2-7b-hf is not the path to a directory containing a file named config.json.",
        ("vllm", "HF_HUB_OFFLINE=1", "set")),
    # an engine importing a class its installed transformers does not have yet
    "library-lacks-name-the-engine-imports": (
        "ImportError: cannot import name 'Qwen2_5_VLForConditionalGeneration' from 'transformers' "
        "(/usr/local/lib/python3.10/dist-packages/transformers/__init__.py)", ("sglang", "upgrade", "upgrade")),
    # the CUDA runtime's cudaErrorInvalidDeviceFunction string under torch's check: a wheel without this GPU's code
    "invalid-device-function": (
        "File \"/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py\", line 1450, in execute_model\n"
        "RuntimeError: CUDA error: invalid device function", ("vllm", "upgrade", "upgrade")),
    # torch.utils.cpp_extension building a JIT kernel without the CUDA toolkit
    "cuda-home-not-set": (
        "File \"/usr/local/lib/python3.10/dist-packages/torch/utils/cpp_extension.py\", line 2416, in _join_cuda_home\n"
        "    raise OSError('CUDA_HOME environment variable is not set. '\n"
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
        ("sglang", "CUDA_HOME=/usr/local/cuda", "set")),
    # vllm/config.py (v0.5.4) refusing CUDA graphs for bitsandbytes
    "vllm-quantization-needs-eager": (
        "File \"/opt/venv/lib/python3.10/site-packages/vllm/config.py\", line 262, in _verify_quantization\n"
        "ValueError: BitAndBytes with enforce_eager = False is not supported yet.", ("vllm", "--enforce-eager", "set")),
    # ggml_cuda_host_malloc's warning (pinned memory) on a WSL2 host
    "llamacpp-pinned-memory-wsl": (
        "Ubuntu 22.04 under WSL2, RTX 3060. llama_model_load: offloading 32 repeating layers to GPU\n"
        "WARNING: failed to allocate 1024.00 MB of pinned memory: out of memory",
        ("llama.cpp", "GGML_CUDA_NO_PINNED=1", "set")),
    # ollama 0.1.x's GPU discovery on Windows (ollama/ollama#2502): the RX 6700 (gfx1031) beside a list with gfx1030
    "ollama-amdgpu-target-unsupported": (
        'time=2024-02-14T12:00:00 level=WARN source=amd_windows.go:95 msg="amdgpu is not supported" gpu=0 '
        'gpu_type=gfx1031 library="C:\\Program Files\\AMD\\ROCm\\5.5\\bin" '
        'supported_types="[gfx1030 gfx1100 gfx1101 gfx1102 gfx906]"',
        ("llama.cpp", "HSA_OVERRIDE_GFX_VERSION=10.3.0", "set")),
    # vLLM's kernels loaded under another torch (vllm-project/vllm#3147, as pasted)
    "engine-kernels-built-against-another-torch": (
        "ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEE",
        ("vllm", "downgrade", "downgrade")),
    # building llama.cpp for an RTX 50xx with a CUDA toolkit older than 12.8 (ggml-org/llama.cpp#13271, as pasted)
    "nvcc-unknown-gpu-architecture": (
        "nvcc fatal : Unsupported gpu architecture 'compute_120'",
        ("llama.cpp", "-DCMAKE_CUDA_ARCHITECTURES=<an architecture this nvcc knows, e.g. 89: its PTX runs on newer GPUs>",
         "set")),
    # Triton's TensorRT-LLM backend not finding the plugin library (triton-inference-server/tensorrtllm_backend#545)
    "shared-library-not-found": (
        "| tensorrt_llm | 1 | UNAVAILABLE: Not found: unable to load shared library: libnvinfer_plugin_tensorrt_llm.so.9: "
        "cannot open shared object file: No such file or directory |",
        ("tensorrt-llm", "LD_LIBRARY_PATH=<the directory that holds the library>:$LD_LIBRARY_PATH", "set")),
    # TGI 0.9 asked to serve Falcon (huggingface/text-generation-inference#599, as pasted)
    "tgi-unsupported-model-type": (
        "ERROR text_generation_launcher: Shard 0 failed to start\nTraceback (most recent call last):\n  File "
        "\"/opt/conda/bin/text-generation-server\", line 8, in <module>\n    sys.exit(app())\n  File \"/opt/conda/lib/"
        "python3.9/site-packages/text_generation_server/cli.py\", line 78, in serve\nValueError: Unsupported model type falcon",
        ("tgi", "upgrade", "upgrade")),
    # a GGUF-era loader given a GGML .bin (h2oai/h2ogpt#780, as pasted)
    "llamacpp-model-file-not-gguf": (
        "gguf_init_from_file: invalid magic number 67676a74\nerror loading model: llama_model_loader: failed to load "
        "model from llama-2-7b-chat.ggmlv3.q4_0.bin", ("llama.cpp", "downgrade", "downgrade")),
    # ollama 0.3's check of the part beyond VRAM against free RAM and swap (llm/server.go at v0.3.6)
    "ollama-model-larger-than-system-memory": (
        "Error: model requires more system memory (16.3 GiB) than is available (12.1 GiB)",
        ("llama.cpp", "--ctx-size", "lower")),
    # ollama 0.1.x's guess when its runner crashed (ollama/ollama#1566, as pasted)
    "ollama-runner-exited-out-of-memory": (
        "Error: llama runner exited, you may not have enough available memory to run this model",
        ("llama.cpp", "-ngl", "lower")),
    # llama-server answering an image with a text-only model loaded (ngxson/smolvlm-realtime-webcam#6)
    "llamacpp-server-image-input-without-projector": (
        'using llama-server to run the model call appears "image input is not supported by this server"',
        ("llama.cpp", "--mmproj", "set")),
}


def _actions(text: str) -> tuple[list[str], list[dict]]:
    rec, matches = known_failures.match(text)
    return [m.signature.id for m in matches], [a for m in matches[:3] for a in known_failures.actions(m, rec)]


def test_every_catalogued_signature_has_a_real_error_string_here():
    assert set(EXAMPLES) == {s.id for _, s in failures.signatures()}


@pytest.mark.parametrize("sig_id", sorted(EXAMPLES))
def test_each_signature_is_recognised_from_its_real_error_and_answered_with_its_fix(sig_id):
    text, (engine, flag, direction) = EXAMPLES[sig_id]
    ids, actions = _actions(text)
    assert sig_id in ids
    assert any(a["engine"] == engine and a["flag"] == flag and a["direction"] == direction for a in actions), actions


def test_the_issue_example_sets_max_model_len_to_what_the_kv_cache_holds_and_shows_the_ratio():
    _, actions = _actions(EXAMPLES["vllm-kv-cache-below-max-model-len"][0])
    lower = next(a for a in actions if a["flag"] == "--max-model-len")
    assert lower["value"] == "3664" and "4096" in lower["arithmetic"]
    raise_ = next(a for a in actions if a["flag"] == "--gpu-memory-utilization")
    assert raise_["direction"] == "raise" and "4096 / 3664 = 1.12x" in raise_["arithmetic"]


def test_a_context_beyond_the_models_config_is_capped_at_the_length_the_config_derives():
    _, actions = _actions(EXAMPLES["vllm-max-model-len-over-derived"][0])
    assert [(a["flag"], a["value"]) for a in actions][:2] == [("--max-model-len", "32768"),
                                                              ("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "1")]


def test_a_value_the_message_names_is_the_one_to_set():
    _, actions = _actions(EXAMPLES["vllm-dtype-unsupported-by-quantization"][0])
    assert (actions[0]["flag"], actions[0]["value"]) == ("--dtype", "float16")
    _, actions = _actions(EXAMPLES["quantization-differs-from-model-config"][0])
    assert (actions[0]["flag"], actions[0]["value"]) == ("--quantization", "gptq")


def test_the_prefill_budget_is_raised_to_the_longest_input_the_launcher_names():
    _, actions = _actions(EXAMPLES["tgi-prefill-tokens-below-max-input"][0])
    assert [(a["flag"], a["direction"], a["value"]) for a in actions] == [
        ("--max-batch-prefill-tokens", "raise", "8191"), ("--max-input-tokens", "lower", "4096"),
        ("--max-input-length", "lower", "4096")]


def test_the_dtype_fix_comes_from_the_engine_profile_for_the_gpus_compute_capability():
    _, actions = _actions(EXAMPLES["vllm-bfloat16-needs-sm80"][0])
    dtype = next(a for a in actions if a["flag"] == "--dtype")
    vllm = profiles.profile("vllm")
    assert at_least("7.0", vllm.dtypes[dtype["value"]].min_cc) and not at_least("7.0", vllm.dtypes["bfloat16"].min_cc)
    assert "7.0" in dtype["arithmetic"]


def test_a_quantization_the_gpu_lacks_is_replaced_by_one_the_profile_has_kernels_for():
    _, actions = _actions(EXAMPLES["vllm-quantization-needs-newer-gpu"][0])
    quant = next(a for a in actions if a["flag"] == "--quantization")
    assert quant["value"] != "awq"
    assert at_least("7.0", profiles.profile("vllm").quantization[quant["value"]].min_cc)


def test_the_marlin_kernel_the_message_names_is_the_value_to_set():
    _, actions = _actions(EXAMPLES["vllm-marlin-kernel-available"][0])
    assert next(a for a in actions if a["flag"] == "--quantization")["value"] == "awq_marlin"


def test_a_gpu_independent_pattern_applies_without_a_gpu_but_not_on_a_gpu_that_has_the_kernels():
    fmha = "[TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture (cpp/tensorrt_llm/kernels/fmhaRunner.cpp:87)"
    assert "trtllm-fmha-unsupported-architecture" in _actions(fmha)[0]
    assert "trtllm-fmha-unsupported-architecture" not in _actions(f"NVIDIA H100 80GB HBM3 {fmha}")[0]


def test_tensor_parallel_size_is_the_largest_divisor_of_the_heads_that_fits_the_gpus():
    _, actions = _actions(EXAMPLES["vllm-heads-not-divisible-by-tp"][0])
    assert next(a for a in actions if a["flag"] == "--tensor-parallel-size")["value"] == "5"


def test_an_out_of_memory_lowers_the_memory_fraction_by_the_share_the_allocation_lacked():
    _, actions = _actions(EXAMPLES["cuda-out-of-memory"][0])
    fraction = next(a for a in actions if a["engine"] == "vllm" and a["flag"] == "--gpu-memory-utilization")
    default = profiles.profile("vllm").memory_fraction.default
    assert float(fraction["value"]) < default and str(default) in fraction["arithmetic"]


def test_an_out_of_memory_during_cuda_graph_capture_puts_eager_mode_first():
    _, actions = _actions("vLLM Capturing cudagraphs for decoding. torch.OutOfMemoryError: CUDA out of memory.")
    assert actions[0]["flag"] == "--enforce-eager"


def test_flags_are_spelt_as_the_release_in_the_text_spells_them():
    old = "text-generation-inference:1.4.5 `max_input_length` must be < `max_total_tokens`"
    new = "text-generation-inference:2.0.0 `max_input_tokens` must be < `max_total_tokens`"
    assert any(a["flag"] == "--max-input-length" for a in _actions(old)[1])
    assert any(a["flag"] == "--max-input-tokens" for a in _actions(new)[1])
    flashinfer = "sglang 0.2.12 GPU 0: Tesla T4 flashinfer crash"
    flags = [a["flag"] for a in _actions(flashinfer)[1]]
    assert "--disable-flashinfer" in flags and "--attention-backend" not in flags


def test_with_no_release_in_the_text_a_renamed_flag_is_also_given_in_its_older_spelling_with_its_last_release():
    text = "Input validation error: `inputs` must have less than 1024 tokens. Given: 1168."
    flags = {a["flag"]: a for a in _actions(text)[1] if a["engine"] == "tgi"}
    assert flags["--max-input-tokens"]["since"] == "2.0.0"
    assert flags["--max-input-length"]["until"] == "1.4.5" and flags["--max-input-length"]["direction"] == "raise"
    with_release = _actions("text-generation-inference:1.4.5 " + text)[1]
    assert [a["flag"] for a in with_release if a["flag"].startswith("--max-input")] == ["--max-input-length"]


def test_the_batch_managers_length_check_raises_the_sequence_length_the_engine_was_built_with():
    # cpp/tensorrt_llm/batch_manager (GenericLlmRequest::validate): the in-flight batching length check.
    text = "[TensorRT-LLM][ERROR] Assertion failed: Input length (2048) + max new tokens (512) > max sequence length"
    ids, actions = _actions(text)
    assert ids[0] == "trtllm-prompt-beyond-max-seq-len"
    assert ("--max_seq_len", "raise") in [(a["flag"], a["direction"]) for a in actions]


def test_vllm_v1s_kv_cache_message_is_read_with_and_without_its_estimate():
    # vllm/v1/core/kv_cache_utils.py (check_enough_kv_cache_memory), v0.8 and later.
    text = ("ValueError: To serve at least one request with the models's max seq len (32768), (5.0 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (0.53 GiB).")
    ids, actions = _actions(text)
    assert ids[0] == "vllm-kv-cache-below-max-model-len"
    assert ("--max-model-len", "lower") in [(a["flag"], a["direction"]) for a in actions]


def test_transformers_own_missing_template_message_is_the_missing_chat_template_failure():
    # transformers/tokenization_utils_base.py (get_chat_template), 4.44 and later.
    text = ("ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template "
            "argument was passed! vllm 0.6.3")
    ids, actions = _actions(text)
    assert ids == ["chat-template-missing"]
    assert ("vllm", "--chat-template", "set") in [(a["engine"], a["flag"], a["direction"]) for a in actions]


def test_tgis_missing_packed_tensor_asks_for_the_checkpoints_quantization():
    # server/text_generation_server/utils/weights.py (get_tensor): a GPTQ tensor the launcher did not expect.
    text = "text-generation-launcher RuntimeError: weight model.layers.0.self_attn.q_proj.qweight does not exist"
    ids, actions = _actions(text)
    assert ids == ["quantized-weight-name-unknown"]
    assert ("tgi", "--quantize", "set") in [(a["engine"], a["flag"], a["direction"]) for a in actions]


@pytest.mark.parametrize(("text", "fix"), [
    # triton-inference-server/tensorrtllm_backend#424 (TensorRT's plan check)
    ("Can't launch triton server following docs, expecting [TensorRT] library version 9.2.0.5 got 9.3.0.1",
     ("tensorrt-llm", "upgrade", "upgrade")),
    # NVIDIA/TensorRT-LLM#1812 (the backend reads a config.json key an older builder did not write)
    ("E0703 14:20:40.781912 368 backend_model.cc:692] \"ERROR: Failed to create instance: unexpected error when creating "
     "modelInstanceState: [json.exception.out_of_range.403] key 'use_context_fmha_for_generation' not found\"",
     ("tensorrt-llm", "upgrade", "upgrade")),
    # vllm-project/vllm#16006: a crash inside the compiled forward, seen only as traceback frames
    ("ERROR 04-03 17:57:33 core.py:208]   File \"/home/u/vllm/vllm/compilation/decorators.py\", line 238, in __call__\n"
     "ERROR 04-03 17:57:33 core.py:208]     output = self.compiled_callable(*args, **kwargs)\n"
     "ERROR 04-03 17:57:33 core.py:208]   File \"/home/u/.venv/lib/python3.12/site-packages/torch/_dynamo/eval_frame.py\", "
     "line 465, in _fn", ("vllm", "--enforce-eager", "set")),
    # ollama's scheduler when the runner fails to load a model (server/sched.go at v0.5.7)
    ("Error: llama runner process has terminated: error loading model: this model may be incompatible with your "
     "version of Ollama. If you previously pulled this model, try updating it by running `ollama pull qwen3`",
     ("llama.cpp", "upgrade", "upgrade")),
    # llama-cpp-python's own check of llama_decode (llama_cpp/_internals.py), code 1: no KV slot for the batch
    ('File "/usr/lib/python3/site-packages/llama_cpp/_internals.py", line 334, in decode\n'
     "RuntimeError: llama_decode returned 1", ("llama.cpp", "--ctx-size", "raise")),
    # llama.cpp's KV cache check for a batch larger than the whole cache (llama-kv-cache.cpp, as ollama v0.5.7 vendors it)
    ("llama_kv_cache_find_slot: n_tokens=4096 > cache.size=2048", ("llama.cpp", "--ctx-size", "raise")),
    # the CUDA runtime's cudaErrorUnsupportedPtxVersion: kernels built by a CUDA newer than the driver
    ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.", ("vllm", "upgrade", "upgrade")),
    # vLLM's fallback for an architecture it has no implementation of (model_loader/utils.py, resolve_transformers_arch)
    ("WARNING 05-04 11:27:35 [utils.py:79] Qwen3ForCausalLM has no vLLM implementation, falling back to Transformers "
     "implementation. Some features may not be supported and performance may not be optimal.",
     ("vllm", "upgrade", "upgrade")),
    # ggml-org/llama.cpp#9271: Vulkan's pinned host memory ran out with a 128k default context
    ("Bug: ggml_vulkan: Failed to allocate pinned memory.", ("llama.cpp", "-c", "lower")),
    # rocBLAS finding no Tensile kernels for the GPU's target (library/src/tensile_host.cpp), as llama.cpp prints it
    ("main: build = 1641 (6744dbe)\nrocBLAS error: Cannot read /opt/rocm-5.7.0/lib/rocblas/library/TensileLibrary.dat: "
     "Illegal seek for GPU arch : gfx1103\n List of available TensileLibrary Files :",
     ("llama.cpp", "HSA_OVERRIDE_GFX_VERSION", "set")),
])
@pytest.mark.django_db
def test_version_mismatches_compiler_frames_and_pinned_memory_are_answered_with_their_fix(text, fix):
    engine, flag, direction = fix
    result = diagnose(text)
    assert error_hit(result, {"engine": engine, "fixes": [{"flag": flag, "direction": direction}]}, aliases=True), \
        [(a["engine"], a["flag"], a["direction"]) for f in result["findings"][:3] for a in f["actions"]]


@pytest.mark.django_db
def test_the_cuda_runtimes_bare_out_of_memory_line_is_answered_fix_first_without_unrelated_techniques():
    # ggml-org/llama.cpp#4680's title: before, three technique findings (multi-LoRA among them) ranked above the fix
    findings = diagnose("CUDA error: out of memory")["findings"]
    assert findings[0]["kind"] == "known_failure" and findings[0]["actions"]
    assert all(f.get("technique") != "multi_lora" for f in findings[:3])


def test_a_traceback_frame_answers_only_when_the_error_under_it_is_not_known():
    frame = EXAMPLES["vllm-profile-run-crashed"][0]
    assert _actions(frame)[0] == ["vllm-profile-run-crashed"]
    known = frame + " ValueError: No available memory for the cache blocks."
    assert _actions(known)[0] == ["vllm-no-memory-for-cache-blocks"]


def test_an_upgrade_is_not_proposed_to_a_release_that_already_has_the_fix():
    text = "vllm 0.3.5 [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)"
    assert not any(a["direction"] == "upgrade" for a in _actions(text)[1])


def test_a_gpu_bound_failure_needs_the_gpu_to_be_below_its_capability():
    assert "sglang-flashinfer-on-pre-ampere" not in _actions("sglang on an H100: flashinfer backend selected")[0]


def test_the_parser_reads_engine_version_gpu_and_capability_from_a_traceback():
    rec = recognise("INFO api_server.py:149] vLLM API server version 0.4.0.post1 ... Your Tesla T4 GPU has compute "
                    "capability 7.5. ValueError: Bfloat16 is only supported")
    assert (rec.engine, rec.version, rec.compute_capability, rec.exception) == ("vllm", "0.4.0.post1", "7.5", "ValueError")
    assert rec.gpu is not None and rec.gpu.name.startswith("Tesla T4")


def test_a_flag_the_engine_profile_lacks_is_a_catalog_load_error(tmp_path: Path):
    bad = {"engine": "vllm", "about": "a misspelt flag key",
           "signatures": [{"id": "bad-flag", "title": "bad flag", "kind": "memory", "patterns": ["x"],
                           "source": "https://example.org/x",
                           "fixes": {"vllm": [{"knob": "gpu_mem_util", "direction": "lower", "why": "misspelt on purpose"}]}}]}
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(CatalogError, match="no flag key 'gpu_mem_util'"):
        load_file(path)
    bad["signatures"][0]["fixes"]["vllm"][0] = {"knob": "max_model_len", "direction": "shrink", "why": "not a direction"}
    path.write_text(json.dumps(bad))
    with pytest.raises(CatalogError, match="direction"):
        load_file(path)


def test_the_error_data_set_holds_forty_resolved_threads_split_by_thread_plus_blind_splits():
    cases = [json.loads(line) for line in ERRORS.read_text(encoding="utf-8").splitlines()]
    assert len(cases) >= 40 and len({c["url"] for c in cases}) == len(cases)
    # every split is one the bench reports, so no thread sits in a split nobody scores
    assert {c["split"] for c in cases} == set(ERROR_SPLITS)
    assert set(ERROR_SPLITS) >= {"dev", "validation", "blind", "blind2", "blind3", "blind4", "blind9", "blind10", "blind11", "blind12", "blind13", "blind14", "blind15",
                                 "blind16", "blind17", "blind18",
                                 "blind19", "blind20", "blind21", "blind22", "blind23", "blind24", "blind25",
                                 "blind26", "blind27"}
    assert sum(c["split"] == "blind" for c in cases) >= 20
    assert sum(c["split"] == "blind2" for c in cases) >= 18
    assert sum(c["split"] == "blind3" for c in cases) >= 25
    assert sum(c["split"] == "blind4" for c in cases) >= 20
    assert sum(c["split"] == "blind5" for c in cases) >= 2
    assert sum(c["split"] == "blind8" for c in cases) >= 20
    assert sum(c["split"] == "blind16" for c in cases) >= 20
    assert sum(c["split"] == "blind17" for c in cases) >= 30
    assert sum(c["split"] == "blind18" for c in cases) >= 19
    assert sum(c["split"] == "blind19" for c in cases) >= 12
    # the eight sets of the afternoon of 2026-12-04, 90 threads
    assert sum(c["split"] in {f"blind{n}" for n in range(20, 28)} for c in cases) == 90
    # the sets of the evening of 2026-12-04 (blind30 and blind37 brought no confirmed new thread)
    assert sum(c["split"] in {f"blind{n}" for n in (28, 29, 31, 32, 33, 34, 35, 36)} for c in cases) == 46
    # and the four sets collected after that from Q&A pages and projects that embed an engine
    assert sum(c["split"] in {f"blind{n}" for n in (38, 39, 40, 41)} for c in cases) == 17
    # the sets of 2026-12-05 (blind48 brought no thread; two of blind46's and blind47's stop before their error line)
    assert sum(c["split"] in {f"blind{n}" for n in (46, 47, 49)} for c in cases) == 6
    assert all(c["fixes"] and c["resolution"] and c["error"] for c in cases)


@pytest.mark.django_db
def test_a_pasted_error_is_answered_fix_first_with_the_recognised_setup_and_what_is_missing():
    result = diagnose(EXAMPLES["vllm-kv-cache-below-max-model-len"][0])
    top = result["findings"][0]
    assert top["kind"] == "known_failure" and top["signature"] == "vllm-kv-cache-below-max-model-len"
    assert top["actions"][0]["flag"] == "--max-model-len" and top["source"]["url"].startswith("https://")
    assert result["recognised"]["engine"] == "vllm" and "the engine version" in result["missing"]
    explains = known_failures.match(result["query"])[1][0].signature.explains
    assert {f["technique"] for f in result["findings"][1:]} <= set(explains)
    assert error_hit(result, {"engine": "vllm", "fixes": [{"flag": "--max-model-len", "direction": "lower"}]})


def test_a_driver_level_out_of_memory_in_a_wrapper_log_is_answered_with_the_embedded_engines_flag():
    # torch_memory_saver (SGLang's allocator for RL frameworks) prints the CUDA driver's CUresult 2.
    ids, acts = _actions("[torch_memory_saver.cpp] CUresult error: 2 (out of memory) file=csrc/utils.h func=cu_mem_create")
    assert ids == ["cuda-out-of-memory"]
    assert {a["engine"] for a in acts} == {"sglang"}
    assert ("--mem-fraction-static", "lower") in [(a["flag"], a["direction"]) for a in acts]


def test_a_context_window_exceeded_with_no_engine_named_offers_each_engines_context_flag_with_the_number():
    ids, acts = _actions("ValueError: Requested tokens (516) exceed context window of 512")
    assert ids == ["request-longer-than-served-context"]
    ctx = next(a for a in acts if a["engine"] == "llama.cpp")
    assert (ctx["flag"], ctx["direction"], ctx["value"]) == ("--ctx-size", "raise", "516")
    assert {"vllm", "sglang", "tgi"} <= {a["engine"] for a in acts}


def test_a_lora_rank_above_the_engines_maximum_is_raised_to_the_adapters_rank_in_tensorrt_llm_too():
    _, acts = _actions(EXAMPLES["trtllm-lora-rank-over-max"][0])
    assert (acts[0]["flag"], acts[0]["value"]) == ("--max_lora_rank", "1024")


@pytest.mark.django_db
def test_a_wrapper_log_the_catalog_knows_is_answered_fix_first():
    result = diagnose("[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create")
    assert result["findings"][0]["kind"] == "known_failure" and result["recognised"]["engine"] == "sglang"
    assert error_hit(result, {"engine": "sglang", "fixes": [{"flag": "--mem-fraction-static", "direction": "lower"}]})


@pytest.mark.django_db
def test_an_unknown_log_gets_no_unrelated_technique_and_is_asked_for_the_missing_details():
    result = diagnose("Traceback (most recent call last): KeyError: 'model.embed_tokens.weight'")
    assert result["findings"] == [] and result["answered"] is False
    assert "the engine version" in result["message"] and "the full error" in result["message"]


@pytest.mark.django_db
def test_the_api_returns_the_fix_fields_for_a_pasted_error():
    response = APIClient().post("/api/diagnose", {"query": EXAMPLES["tgi-prefill-tokens-do-not-fit"][0]}, format="json")
    assert response.status_code == 200
    action = response.json()["findings"][0]["actions"][0]
    assert (action["flag"], action["direction"], action["value"]) == ("--max-batch-prefill-tokens", "lower", "2048")
    assert {"arithmetic", "source", "why", "since", "engine"} <= set(action)


@pytest.mark.django_db
def test_the_command_prints_the_fix_with_its_number_before_anything_else():
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("diagnose", EXAMPLES["vllm-kv-cache-below-max-model-len"][0], stdout=out)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert lines[0].startswith("recognised: vllm")
    assert lines[1].startswith("1. ") and lines[2].strip() == "fix: vllm: lower --max-model-len 3664"


@pytest.mark.django_db
def test_the_page_shows_the_fix_and_its_number_before_the_source_and_the_literature():
    from django.template.loader import render_to_string

    text = EXAMPLES["vllm-kv-cache-below-max-model-len"][0]
    html = render_to_string("frontend/diagnose.html", {"q": text, "result": diagnose(text), "max_chars": 2000})
    fix, source = html.index("--max-model-len 3664"), html.index("Where the message comes from")
    assert fix < source and "4096 / 3664 = 1.12x" in html
    assert "What papers measured" not in html or source < html.index("What papers measured")


def test_an_sglang_out_of_memory_while_capturing_graphs_puts_the_graph_settings_first():
    text = ('File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 300, in capture\n'
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.")
    rec, matches = known_failures.match(text)
    oom = next(m for m in matches if m.signature.id == "cuda-out-of-memory")
    assert [a["flag"] for a in known_failures.actions(oom, rec)][:2] == ["--cuda-graph-max-bs", "--disable-cuda-graph"]
    plain = "[TP0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. sglang"
    rec, matches = known_failures.match(plain)
    assert known_failures.actions(matches[0], rec)[0]["flag"] == "--mem-fraction-static"


def test_a_prompt_the_wrapper_truncated_raises_the_context_to_hold_the_whole_prompt():
    # ollama's llama.cpp runner logs the cut with slog (runner/llamarunner/runner.go); no engine is named
    rec, matches = known_failures.match(
        'time=2025-01-01T10:00:00.000Z level=WARN source=runner.go:130 msg="truncating input prompt" limit=4096 '
        "prompt=9000 keep=4 new=4096")
    assert rec.engine == "llama.cpp" and matches[0].signature.id == "llamacpp-prompt-truncated-to-context"
    first = known_failures.actions(matches[0], rec)[0]
    assert (first["flag"], first["direction"], first["value"]) == ("--ctx-size", "raise", "9000")


def test_llama_servers_context_error_type_alone_is_the_full_context():
    ids, acts = _actions('llama-server HTTP 400 {"error":{"code":400,"type":"exceed_context_size_error"}}')
    assert ids[0] == "llamacpp-kv-cache-full" and (acts[0]["flag"], acts[0]["direction"]) == ("--ctx-size", "raise")


def test_ggmls_cuda_allocation_failure_in_other_words_is_the_allocation_failure():
    ids, _ = _actions("llama.cpp: CUDA malloc fails when loading the model")
    assert ids == ["llamacpp-allocation-failed"]


def test_a_flag_is_answered_in_the_spelling_the_pasted_command_line_uses():
    text = ("llama-server --model m.gguf --n-gpu-layers 99 -c 8192\nggml_backend_cuda_buffer_type_alloc_buffer: "
            "allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory")
    _, acts = _actions(text)
    spelt = {a["flag"] for a in acts}
    assert "--n-gpu-layers" in spelt and "-ngl" not in spelt  # the text's own long form, not the profile's short one
    assert "-c" in spelt and "--ctx-size" not in spelt


@pytest.mark.django_db
def test_a_log_wrapped_mid_number_is_still_recognised():
    wrapped = EXAMPLES["vllm-kv-cache-below-max-model-len"][0].replace("KV cache (3664)", "KV cache (\n3664)")
    result = diagnose(wrapped)
    assert result["findings"][0].get("signature") == "vllm-kv-cache-below-max-model-len"
    assert result["findings"][0]["actions"][0]["value"] == "3664"


def test_a_path_inside_vllms_kernel_sources_does_not_make_the_log_vllms():
    text = ("Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not "
            "supported between these two devices'")
    rec, matches = known_failures.match(text)
    assert rec.engine is None and matches[0].signature.id == "gpu-peer-access-unsupported"
    acts = known_failures.actions(matches[0], rec)
    assert ("sglang", "--disable-custom-all-reduce") in [(a["engine"], a["flag"]) for a in acts]
    assert recognise("File \"/opt/vllm/vllm/worker/worker.py\", line 3").engine == "vllm"


def test_a_long_context_kv_shortfall_also_offers_chunked_prefill_which_frees_the_profiled_activations():
    _, acts = _actions(EXAMPLES["vllm-kv-cache-below-max-model-len"][0])
    assert ("--enable-chunked-prefill", "set") in [(a["flag"], a["direction"]) for a in acts]


def test_a_hang_line_is_a_fallback_that_a_real_error_beside_it_outranks():
    hang = "Waiting for output from MQLLMEngine. the server hangs"
    assert [m.signature.id for m in known_failures.match(hang)[1]] == ["vllm-engine-stopped-answering"]
    ids = [m.signature.id for m in known_failures.match(hang + " " + EXAMPLES["vllm-preempted"][0])[1]]
    assert "vllm-engine-stopped-answering" not in ids and "vllm-preempted" in ids


# Other wordings of catalogued families, each as its engine's source formats it (the file is named beside it).
FAMILY_WORDINGS = [
    # llama.cpp src/llama-context.cpp (decode), then tools/main/main.cpp
    ("decode: failed to find a memory slot for batch of size 512", "llamacpp-kv-cache-full", ("--ctx-size", "raise")),
    ("main: error: prompt is too long (5000 tokens, max 4092)", "llamacpp-kv-cache-full", ("--ctx-size", "raise")),
    # llama.cpp src/llama-context.cpp, src/llama-model.cpp
    ("llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers",
     "llamacpp-allocation-failed", ("--ubatch-size", "lower")),
    ("llama_model_load: error loading model: unable to allocate CUDA0 buffer", "llamacpp-allocation-failed",
     ("-ngl", "lower")),
    # vLLM's Marlin shape check and the FP8 block-quantization check (vLLM and SGLang fp8.py)
    ("ValueError: Weight input_size_per_partition = 3696 is not divisible by min_thread_k = 128. Consider reducing "
     "tensor_parallel_size or running with --quantization gptq. vllm", "quantized-shape-not-divisible-by-tp",
     ("--tensor-parallel-size", "lower")),
    ("sglang ValueError: The output_size of gate's and up's weight = 192 is not divisible by weight quantization "
     "block_n = 128.", "quantized-shape-not-divisible-by-tp", ("--tp", "lower")),
    # SGLang python/sglang/srt/managers/tokenizer_manager.py
    ("sglang ValueError: Requested token count exceeds the model's maximum context length of 8192 tokens. You requested "
     "a total of 9000 tokens: 8000 tokens from the input messages and 1000 tokens for the completion.",
     "sglang-input-longer-than-context", ("--context-length", "raise")),
]


@pytest.mark.parametrize(("text", "sig_id", "fix"), FAMILY_WORDINGS)
def test_each_engines_own_wording_of_a_family_is_answered_with_its_flag(text, sig_id, fix):
    ids, acts = _actions(text)
    assert ids[0] == sig_id
    assert fix in [(a["flag"], a["direction"]) for a in acts], acts


@pytest.mark.parametrize(("text", "fix"), [
    ("[TRT-LLM] This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
     ("--max_seq_len", "raise")),
    ("[TRT-LLM] ValueError: 40 is not divisible by 3", ("--tp_size", "set")),
    ("[TRT-LLM] RuntimeError: CUDA error: invalid device ordinal", ("--tp_size", "lower")),
    ("text-generation-launcher: The input size is not aligned with the quantized weight shape", ("--num-shard", "lower")),
])
def test_a_common_family_answers_with_the_recognised_engines_own_flag(text, fix):
    rec, matches = known_failures.match(text)
    acts = known_failures.actions(matches[0], rec)
    assert {a["engine"] for a in acts} == {rec.engine} and fix in [(a["flag"], a["direction"]) for a in acts], acts


def test_the_gpus_own_capability_is_read_from_pytorchs_arch_check_not_the_builds_list():
    # torch/cuda/__init__.py's _check_capability message; sm_120 is 12.0 (the last digit is the minor version)
    rec = recognise("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
                    "installation. The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 "
                    "sm_80 sm_86 sm_90.")
    assert rec.compute_capability == "12.0"
    assert rec.gpu is not None and rec.gpu.name.endswith("RTX 5090")
    assert recognise("built for sm_89 only").compute_capability == "8.9"


def test_pytorchs_arch_check_is_a_build_without_kernels_for_the_gpu():
    # the warning torch/cuda/__init__.py (_check_cubins) prints for a GPU its wheel was not compiled for
    text = ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.")
    failures, actions = _actions("vllm serve meta-llama/Llama-3.1-8B-Instruct\n" + text)
    assert "no-kernel-image-for-gpu" in failures
    assert any(a["direction"] == "upgrade" for a in actions)


def test_rays_object_store_warning_about_a_small_dev_shm_is_the_containers_shared_memory():
    # Ray (python/ray/_private/services.py) under vLLM's tensor-parallel workers in Docker (vllm-project/vllm#1710)
    text = ("docker run --runtime nvidia --gpus all vllm:latest --model=/mnt/model/ --tensor-parallel-size 2\n"
            "2023-11-18 03:39:16,283 WARNING services.py:1996 -- WARNING: The object store is using /tmp instead of "
            "/dev/shm because /dev/shm has only 67108864 bytes available. This will harm performance!")
    ids, actions = _actions(text)
    assert "shared-memory-too-small" in ids
    assert any(a["engine"] == "vllm" and a["flag"] == "--shm-size" and a["direction"] == "raise" for a in actions)


def test_an_engine_built_by_another_release_moves_either_side_and_a_catalog_downgrade_is_an_action():
    # Triton's TRT-LLM backend loading an engine a newer TensorRT built (tensorrtllm_backend issue 190)
    text = ("[TensorRT-LLM][ERROR] 1: [stdArchiveReader.cpp::stdArchiveReaderInitCommon::47] Error Code 1: "
            "Serialization (Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does "
            "not match. Note: Current Version: 226, Serialized Engine Version: 228)")
    ids, actions = _actions(text)
    assert ids[0] == "trtllm-engine-from-another-release"
    assert [a["direction"] for a in actions if a["engine"] == "tensorrt-llm"][:2] == ["upgrade", "downgrade"]
    down = next(a for a in actions if a["direction"] == "downgrade")
    assert down["flag"] == "downgrade" and down["source"].startswith("https://")


def test_a_quantized_tensor_name_the_loader_does_not_know_also_gets_an_upgrade():
    # a compressed-tensors checkpoint from llm-compressor on an older vLLM (llm-compressor issue 959)
    text = ("python -m vllm.entrypoints.openai.api_server --model /m --tensor-parallel-size 2\n"
            "KeyError: 'layers.0.mlp.down_proj.weight_scale'")
    ids, actions = _actions(text)
    assert "quantized-weight-name-unknown" in ids
    assert any(a["engine"] == "vllm" and a["direction"] == "upgrade" for a in actions)


def test_a_small_dev_shm_is_also_answered_with_the_hosts_ipc_namespace():
    # vllm-project/vllm#1393: Ray's warning; the fix that thread used was --ipc=host
    text = ("2023-10-17 09:57:37,236 WARNING services.py:1889 -- WARNING: The object store is using /tmp instead of "
            "/dev/shm because /dev/shm has only 46964736 bytes available. vllm")
    _, actions = _actions(text)
    assert any(a["engine"] == "vllm" and a["flag"] == "--ipc" and a["value"] == "host" for a in actions)


def test_the_amd_override_is_the_supported_target_of_the_gpus_own_family_with_its_arithmetic():
    _, actions = _actions(EXAMPLES["ollama-amdgpu-target-unsupported"][0])
    override = next(a for a in actions if a["flag"].startswith("HSA_OVERRIDE_GFX_VERSION"))
    assert override["value"] == "10.3.0" and "gfx1031 is 10.3.1" in override["arithmetic"]
    # ollama 0.5's wording, where the list comes first; gfx90a's stepping is hex (9.0.10)
    newer = ('msg="amdgpu is not supported (supported types:[gfx908 gfx90a gfx1100])" gpu_type=gfx90c gpu=0 '
             'library=/usr/lib/ollama')
    _, actions = _actions(newer)
    assert next(a for a in actions if a["flag"].startswith("HSA_OVERRIDE"))["value"] == "9.0.8"
    # no target of the GPU's family in the list: no number is invented, the placeholder says what to look up
    _, actions = _actions('msg="amdgpu is not supported" gpu=0 gpu_type=gfx1031 supported_types="[gfx1100 gfx906]"')
    override = next(a for a in actions if a["flag"].startswith("HSA_OVERRIDE"))
    assert override["value"].startswith("<") and override["arithmetic"] is None
    # rocBLAS lists the Tensile libraries it ships after its refusal (library/src/tensile_host.cpp), as ollama ran it
    rocblas = ('rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU '
               'arch : gfx1032\n List of available TensileLibrary Files : \n'
               '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1101.dat"\n'
               '"/opt/rocm/lib/rocblas/library/TensileLibrary_lazy_gfx1030.dat"')
    _, actions = _actions(rocblas)
    override = next(a for a in actions if a["engine"] == "llama.cpp" and a["flag"].startswith("HSA_OVERRIDE"))
    assert override["value"] == "10.3.0" and "gfx1032 is 10.3.2" in override["arithmetic"]


@pytest.mark.parametrize("text,sig_id,fix", [
    # tensorrtllm_backend#212: the runtime does not send an input the engine was built to take
    ("[TensorRT-LLM][ERROR] Encountered an error in forward function: Input tensor 'host_max_kv_cache_length_0' not "
     "found; expected shape: (1) (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmRuntime.cpp:124)",
     "trtllm-engine-from-another-release", ("tensorrt-llm", "upgrade", "upgrade")),
    # sgl-project/sglang#251: SGLang's own module imports a name its installed outlines no longer has
    ('File "/root/anaconda3/envs/s/lib/python3.10/site-packages/sglang/srt/constrained/__init__.py", line 4, in <module>\n'
     "    from outlines.fsm.json_schema import build_regex_from_object\n"
     "ImportError: cannot import name 'build_regex_from_object' from 'outlines.fsm.json_schema'",
     "library-lacks-name-the-engine-imports", ("sglang", "upgrade", "upgrade")),
    # vLLM's registry failing to import a model file whose transformers import fails (vllm-project/vllm#12932)
    ("ValueError: Model architectures ['Qwen2_5_VLForConditionalGeneration'] failed to be inspected. Please check the "
     "logs for more details. vllm/model_executor/models/registry.py", "library-lacks-name-the-engine-imports",
     ("vllm", "upgrade", "upgrade")),
    # llama-cpp-python 0.1.67's GGML-era loader given a ggjt v3 file (abetlen/llama-cpp-python#446, as pasted)
    ("error loading model: unknown (magic, version) combination: 67676a74, 00000003; is this really a GGML file?",
     "llamacpp-model-file-newer-than-build", ("llama.cpp", "upgrade", "upgrade")),
    # ggml's no_device_code report for a build without the GPU's architecture (ggml-org/llama.cpp#5686)
    ("ggml-cuda.cu:3211: ERROR: CUDA kernel vec_dot_q5_K_q8_1_impl_vmmq has no device code compatible with CUDA arch "
     "520. ggml-cuda.cu was compiled for: 520", "no-kernel-image-for-gpu", ("llama.cpp", "upgrade", "upgrade")),
])
def test_a_second_wording_of_a_catalogued_failure_is_recognised(text, sig_id, fix):
    ids, actions = _actions(text)
    assert sig_id in ids
    assert any((a["engine"], a["flag"], a["direction"]) == fix for a in actions), actions


def test_an_import_error_raised_in_the_persons_own_module_is_not_the_engines():
    text = ('File "/home/me/app/serve.py", line 4, in <module>\n    from outlines.fsm.json_schema import x\n'
            "ImportError: cannot import name 'x' from 'outlines.fsm.json_schema' (sglang installed)")
    ids, _ = _actions(text)
    assert "library-lacks-name-the-engine-imports" not in ids


def test_a_torch_symbol_missing_from_engine_kernels_moves_torch_and_other_symbols_stay_with_the_engine():
    ids, actions = _actions(EXAMPLES["engine-kernels-built-against-another-torch"][0])
    assert "shared-library-undefined-symbol" not in ids
    assert (actions[0]["direction"], actions[0].get("target")) == ("downgrade", "torch")
    # a symbol of another library (a Triton backend's) is no torch mismatch
    ids, _ = _actions(EXAMPLES["shared-library-undefined-symbol"][0])
    assert ids[:1] == ["shared-library-undefined-symbol"]


@pytest.mark.django_db
def test_a_compiler_drivers_fatal_error_is_a_pasted_log_answered_fix_first():
    result = diagnose(EXAMPLES["nvcc-unknown-gpu-architecture"][0])
    assert result["findings"][0]["kind"] == "known_failure"
    assert any(a.get("target") == "cuda-toolkit" for a in result["findings"][0]["actions"])


@pytest.mark.django_db
def test_ollamas_own_memory_check_is_answered_in_ollamas_spellings():
    result = diagnose(EXAMPLES["ollama-model-larger-than-system-memory"][0])
    assert result["recognised"]["wrapper"] == "ollama"
    flags = [a["flag"] for a in result["findings"][0]["actions"]]
    assert flags[:2] == ["--ctx-size", "OLLAMA_CONTEXT_LENGTH"] and "num_ctx" in flags and "OLLAMA_NUM_PARALLEL" in flags

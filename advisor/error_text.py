"""What a pasted error or log states about the setup: engine and version, GPU and compute capability,
the exception class, and whether it happened under tensor parallelism or during CUDA graph capture.

Runs on every diagnose request before the failure catalog is searched. Only what the text itself
says is read; nothing is guessed. The engine is recognised from its own names and the names its
logs and flags use, the GPU through the one GPU vocabulary (ontology.selectors.gpu_vocabulary) and the advisor's GPU
catalog, so a "Tesla V100-SXM2-32GB" in a traceback yields compute capability 7.0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from advisor.catalog import Gpu, resolve_gpu
from advisor.profiles import profiles
from ontology.selectors import gpu_vocabulary

# Each engine's own names in what it prints, case-insensitive: its package and module paths in a traceback, its
# launcher and binary names, its log prefixes and C/C++ symbols ("strong"), then the option names and file formats it
# is known by, which other engines' logs can mention too ("weak": a vLLM log loading a GGUF file says gguf). The
# engine with the most strong evidence wins, then the most weak, then this order. Wrappers that embed one engine are
# read as it: a library only that engine loads is strong evidence (SGLang's torch_memory_saver, ollama's "llama
# runner" around llama.cpp), a wrapper's own name weak (optimum-nvidia; aphrodite-engine, a vLLM fork; ollama's Go log
# attribute `source=runner.go:129`, and its GPU discovery's `source=amd_linux.go:340`; and every wrapper an engine
# profile lists, by its `requires` and its report that the engine died: ollama, koboldcpp, LM Studio), since such
# wrappers may run more than one engine. Process and file names in a log prefix are strong evidence too: vLLM's worker
# processes ("(Worker_TP1 pid=15193) ERROR ... [multiproc_executor.py:962]", since its V1 executor names them by
# rank), TGI's Rust router and launcher crates in a panic ("thread 'main' panicked at router/src/infer.rs:324:14"; the
# repository's router/src and launcher/src), TensorRT-LLM's batch manager parameter maxTokensInPagedKvCache
# (TrtGptModelOptionalParams) as Triton's tensorrtllm_backend reports it.
_ENGINE_MARKERS: tuple[tuple[str, str, str], ...] = (
    ("tensorrt-llm",
     r"tensorrt[-_ ]?llm|\btrtllm[-_]?\w*|\[TRT-LLM\]|\btllm(?:::|_)|\bTLLM_[A-Z]+|trt_engines?|fmhaRunner"
     r"|\bTrtGptModel\w*|\bGptManager\b|\bgptSession\w*|\bmaxTokensInPagedKvCache\b",
     r"max_input_len\b|max_num_tokens|--max_seq_len|--max_batch_size|kv_cache_free_gpu_memory_fraction|optimum[-_./]nvidia"),
    ("sglang",
     r"\bsglang\b|sglang[./]srt|\bsgl[-_](?:kernel|router|lang)|launch_server|\[[^\]\n]{0,40}\bTP\d+(?: [A-Z]{2,3}\d+)*\]"
     r"|torch_memory_saver",
     r"mem[-_]fraction[-_]static|--context-length|--disable-cuda-graph|--chunked-prefill-size|--max-running-requests"),
    ("tgi",
     r"text[-_]generation[-_](?:inference|launcher|server|router|client|benchmark)|\bTGI\b|shard[-_]manager"
     r"|Warmup\(Generation|(?<![\w-])(?:router|launcher)/src/[\w/]+\.rs\b",
     r"max[-_]batch[-_](?:prefill|total)[-_]tokens|--num-shard|--max-input-(?:length|tokens)|--max-total-tokens"
     r"|--cuda-memory-fraction"),
    ("llama.cpp",
     r"llama\.cpp|llama[-_](?:server|cli|cpp|bench|quantize|perplexity|simple)\b|\bllama_[a-z_]+\b|\bllm_load_\w+"
     r"|\bggml[-_]?\w*|GGML_ASSERT|\b(?:server|common|arg)\.cpp\b|\bllama runner\b"
     r"|\bcommon_(?:init_from_params|batch_add|tokenize|chat_\w+)|\b(?:print_info|load_tensors):",
     r"\bgguf\b|--ctx-size|--n-gpu-layers|\B-ngl\b|--cache-type-[kv]|--flash-attn"
     r"|\bsource=(?:runner|server|llama|gpu|amd_linux|amd_windows)\.go:\d+"),
    ("vllm",
     r"\bvllm\b|vllm[./]|EngineCore|RayWorkerVllm|VllmWorker|\bvllm[-_]\w+|\bVLLM_[A-Z_]+"
     r"|\b(?:Async)?LLMEngine\b|\bAsyncLLM\b|\bllm_engine\.py|\bRayWorkerWrapper\b|\(APIServer pid=\d+\)"
     r"|\(Worker(?:_[TDPE]P\d+)+ pid=\d+\)|\[multiproc_executor\.py:\d+\]",
     r"gpu_memory_utilization|max_model_len|enforce[-_]eager|PreemptionMode|max_num_batched_tokens|--max-model-len"
     r"|--gpu-memory-utilization|max_num_seqs|aphrodite"),
)
_VERSION = r"v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+|\.dev\d*)?)"
_ENGINE_VERSION: dict[str, tuple[str, ...]] = {
    "vllm": (rf"\bvllm(?:==|\s+version\s+|\s+v|\s+|:\s*){_VERSION}", rf"LLM engine \({_VERSION}\)",
             rf"vLLM API server version {_VERSION}"),
    "sglang": (rf"\bsglang(?:==|:\s*|\s+version\s+|\s+v|\s+){_VERSION}",),
    "tgi": (rf"text-generation-inference(?::|\s+v?|==){_VERSION}", rf"\btgi\s+`?{_VERSION}"),
    "tensorrt-llm": (rf"TensorRT-LLM(?:\s+version)?:?\s*{_VERSION}", rf"tensorrt[-_]llm(?:==|\s+v?){_VERSION}", rf"trt-?llm\s+v?{_VERSION}"),
    "llama.cpp": (r"\b(?:build|version):?\s*=?\s*(\d{3,5})\b", r"\b(b\d{3,5})\b"),
}
# The GPU's own capability, never the one an error says is needed ("at least 8.0") nor those a build supports
# (PyTorch's "{gpu} with CUDA capability sm_120 is not compatible ... supports CUDA capabilities sm_50 ... sm_90").
# "sm_120" is 12.0: the last digit is the minor version.
_CC = (r"has compute capability\s*(\d{1,2}\.\d)", r"Current capability:\s*(\d)(\d)\b",
       r"with CUDA capability sm_?(\d{1,2})(\d)\b",
       r"(?<!least )compute capability[:\s]+(\d{1,2}\.\d)", r"\bsm_?(\d{1,2})(\d)\b")
_EXCEPTION = r"\b((?:torch\.(?:cuda\.)?)?[A-Z][A-Za-z]*(?:Error|Exception))\b"
# vLLM's shared-memory broadcast (shm_broadcast.py) carries the scheduler's output to the other GPUs' workers, so its
# "No available shared memory broadcast block found" speaks of a multi-GPU engine.
_TENSOR_PARALLEL = (r"tensor[-_ ]parallel|--tp\b|tp_size|--num-shard|ProcessGroupNCCL|\bNCCL\b|all[-_ ]?reduce"
                    r"|\bTP\s*[=:]?\s*\d|\bwith TP\b|shared memory broadcast block")
_CUDA_GRAPH = r"cuda[ _]?graph|capturing|graph capture"
_OPTION = r"(?<![\w-])(--?[A-Za-z][\w-]*)(?=[\s=]|$)"


@dataclass(frozen=True)
class Recognised:
    """What the text says about the setup; None where it says nothing."""

    engine: str | None = None
    version: str | None = None
    gpu: Gpu | None = None
    gpu_text: str | None = None
    compute_capability: str | None = None
    exception: str | None = None
    tensor_parallel: bool = False
    cuda_graph: bool = False
    numbers: dict[str, float] = field(default_factory=dict)
    options: frozenset[str] = frozenset()  # command-line options as the text writes them ("--n-gpu-layers")

    def as_dict(self) -> dict[str, object]:
        """The recognised setup as the API reports it (`gpu` is the catalog name when known)."""
        return {"engine": self.engine, "version": self.version,
                "gpu": self.gpu.name if self.gpu else self.gpu_text, "compute_capability": self.compute_capability,
                "exception": self.exception, "tensor_parallel": self.tensor_parallel, "cuda_graph": self.cuda_graph}


# A source path inside vLLM's compiled kernels (csrc/...) names no serving engine: other engines load those
# kernels (SGLang's custom all-reduce came from vLLM's _custom_ops until sgl-kernel, and the wheel's build path is
# printed whichever engine calls it), so such a path is no evidence for any engine.
_SHARED_KERNEL_PATH = r"[\w./-]*/vllm/csrc/[\w./-]*"


@cache
def _weak(engine: str, own: str) -> str:
    """An engine's weak markers: its own (_ENGINE_MARKERS) and its wrappers' (each wrapper's names and its report of
    the engine's death, `wrappers` in the engine profile)."""
    eng = profiles().get(engine)
    wrapped = [p for w in (eng.wrappers if eng else []) for p in w.marks]
    return "|".join(f"(?:{p})" for p in (own, *wrapped))


def engine_of(text: str) -> str | None:
    """The engine with the most of its own names in the text (strong evidence first, see _ENGINE_MARKERS)."""
    text = re.sub(_SHARED_KERNEL_PATH, " ", text)
    scores = []
    for order, (engine, strong, own_weak) in enumerate(_ENGINE_MARKERS):
        weak = _weak(engine, own_weak)
        hits = (len(re.findall(strong, text, re.IGNORECASE)), len(re.findall(weak, text, re.IGNORECASE)))
        if any(hits):
            scores.append((hits, -order, engine))
    return max(scores)[2] if scores else None


def _version(engine: str | None, text: str) -> str | None:
    for pattern in _ENGINE_VERSION.get(engine or "", ()):
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            groups = [g for g in found.groups() if g]
            value = groups[0]
            return value if engine != "llama.cpp" or value.startswith("b") else f"b{value}"
    return None


def _gpu(text: str) -> tuple[Gpu | None, str | None]:
    names = gpu_vocabulary().find(text)
    if not names:
        return None, None
    found = re.search(rf"{re.escape(names[0])}[\w-]*", text, re.IGNORECASE)
    written = found.group(0) if found else names[0]
    return resolve_gpu(written) or resolve_gpu(names[0]), written


def _cc(text: str) -> str | None:
    for pattern in _CC:
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return ".".join(found.groups()) if len(found.groups()) == 2 else found.group(1)
    return None


def _exception(text: str) -> str | None:
    found = [m.group(1) for m in re.finditer(_EXCEPTION, text)]
    return found[-1] if found else None  # the last one raised is the one that stopped the process


def recognise(text: str, engine_hint: str | None = None) -> Recognised:
    """Everything the text states about the setup (`engine_hint`: the engine a matched signature belongs to)."""
    engine = engine_of(text) or engine_hint
    gpu, written = _gpu(text)
    cc = _cc(text)
    if gpu is not None and cc is not None and gpu.compute_capability != cc:
        gpu = None  # the text's own capability wins over a name the catalog resolved differently
    return Recognised(engine=engine, version=_version(engine, text), gpu=gpu, gpu_text=written,
                      compute_capability=cc or (gpu.compute_capability if gpu else None),
                      exception=_exception(text),
                      tensor_parallel=bool(re.search(_TENSOR_PARALLEL, text, re.IGNORECASE)),
                      cuda_graph=bool(re.search(_CUDA_GRAPH, text, re.IGNORECASE)),
                      options=frozenset(re.findall(_OPTION, text)))


# The starts of the CUDA runtime's error strings (cudaGetErrorString, CUDA Runtime API "Error Handling"), as
# torch's C10_CUDA_CHECK and ggml's CUDA_CHECK print them after "CUDA error: ".
_CUDA_RUNTIME_ERROR = (r"(?:out of memory|an illegal (?:memory access|instruction)|device-side assert|invalid (?:argument|"
                       r"device|configuration|resource)|no kernel image|misaligned address|unspecified launch failure|"
                       r"operation not (?:permitted|supported)|the launch timed out|initialization error|uncorrectable ECC"
                       r"|too many resources|shared object (?:initialization failed|symbol not found)"
                       r"|no CUDA-capable device is detected)")


def looks_like_a_log(text: str) -> bool:
    """True for pasted output rather than a sentence: an exception, a traceback, a log prefix, a source file name (with
    or without its line), a CUDA error code or enum name, the CUDA runtime's own "CUDA error: " prefix (what torch's
    and ggml's CUDA checks print before the runtime's error string, and ggml's "failed to initialize CUDA: " when the
    runtime cannot start, ggml-cuda.cu's ggml_cuda_init), a process's exit status as a wrapper reports it ("exit
    status 0xc0000409"), a compiler driver's fatal error ("nvcc fatal : ..."), or pydantic's report of a rejected
    setting, which is how newer vLLM configs refuse one ("1 validation error for ModelConfig", "Value error, ...")."""
    return bool(re.search(rf"{_EXCEPTION}|Traceback|\[(?:E|W|I)\s?\d|\bERROR\b|GGML_ASSERT|Assertion failed"
                          r"|\bvalidation errors? for [A-Z]\w+|\bValue error, "
                          rf"|\b(?:CUDA error|failed to initialize CUDA): {_CUDA_RUNTIME_ERROR}"
                          r"|[A-Za-z_]+\.(?:py|cpp|cu|rs):\d+|[\w/-]+\.(?:py|cpp|cc|cu|cuh|h|hpp|rs)\b"
                          r"|\bCUresult\b|\bcuda[A-Z]\w*Error\w*|\bcudaError\w+|\bCUDA_ERROR_[A-Z_]+"
                          r"|\bexit status (?:0x[0-9a-fA-F]{8}|\d+)\b|\b(?:nvcc|hipcc|clang|gcc|g\+\+) fatal\s*:", text))


# The CUDA_CHECK of ggml (llama.cpp) before 2024, and many hand-written CUDA checks, print the error code and the
# source line before the runtime's string: "CUDA error 2 at ggml-cuda.cu:1241: out of memory". Newer ggml prints
# "CUDA error: out of memory" and the line after it. ROCm builds hipify the macro and print the same words.
_CODE_AT_LINE = re.compile(r"\bCUDA error \d+ at [^\s:]+:\d+: (?=" + _CUDA_RUNTIME_ERROR + ")",
                           re.IGNORECASE)


def runtime_form(text: str) -> str | None:
    """The text with each "CUDA error <code> at <file>:<line>: <runtime string>" written as "CUDA error: <runtime
    string>", the form torch's and newer ggml's checks print, so one signature reads both; None when there is none."""
    rewritten = _CODE_AT_LINE.sub("CUDA error: ", text)
    return rewritten if rewritten != text else None


def unwrapped(pasted: str) -> str | None:
    """The pasted text with its hard line breaks taken out (other whitespace collapsed, as diagnose reads it):
    a terminal or issue form that wraps a log at a fixed width can cut a message mid-word or mid-number
    ("stored in KV cache (\\n3984)"), which reading the break as a space does not mend. None for one line."""
    if "\n" not in pasted:
        return None
    return " ".join(re.sub(r"\r?\n", "", pasted).split())

"""What a pasted error or log states about the setup: engine and version, GPU and compute capability,
the exception class, and whether it happened under tensor parallelism or during CUDA graph capture.

Runs on every diagnose request before the failure catalog is searched. Only what the text itself
says is read; nothing is guessed. The engine is recognised from its own names and the names its
logs and flags use, the GPU through the one GPU vocabulary (ontology.gpus) and the advisor's GPU
catalog, so a "Tesla V100-SXM2-32GB" in a traceback yields compute capability 7.0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from advisor.catalog import Gpu, resolve_gpu
from ontology.gpus import vocabulary as gpu_vocabulary

# Words and identifiers only one engine's logs, tracebacks or flags contain (checked in this order).
_ENGINE_MARKERS: tuple[tuple[str, str], ...] = (
    ("tensorrt-llm", r"tensorrt[-_ ]?llm|trtllm|\[TRT-LLM\]|trt_engines?|fmhaRunner"),
    ("sglang", r"\bsglang\b|mem[-_]fraction[-_]static|launch_server|sgl[-_]kernel"),
    ("tgi", r"text[-_]generation[-_](?:inference|launcher|server)|\bTGI\b|max[-_]batch[-_](?:prefill|total)[-_]tokens"
            r"|Warmup\(Generation|text_generation_server"),
    ("llama.cpp", r"llama\.cpp|llama[-_](?:server|cli|cpp)|llama_(?:model|new_context|kv_cache|init)|\bggml|\bgguf\b|--ctx-size"),
    ("vllm", r"\bvllm\b|gpu_memory_utilization|max_model_len|EngineCore|RayWorkerVllm|VllmWorker|enforce[-_]eager"
             r"|PreemptionMode|max_num_batched_tokens"),
)
_VERSION = r"v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+|\.dev\d*)?)"
_ENGINE_VERSION: dict[str, tuple[str, ...]] = {
    "vllm": (rf"\bvllm(?:==|\s+version\s+|\s+v|\s+|:\s*){_VERSION}", rf"LLM engine \({_VERSION}\)",
             rf"vLLM API server version {_VERSION}"),
    "sglang": (rf"\bsglang(?:==|:\s*|\s+version\s+|\s+v|\s+){_VERSION}",),
    "tgi": (rf"text-generation-inference(?::|\s+v?|==){_VERSION}", rf"\btgi\s+`?{_VERSION}"),
    "tensorrt-llm": (rf"TensorRT-LLM version:?\s*{_VERSION}", rf"tensorrt[-_]llm(?:==|\s+v?){_VERSION}", rf"trt-?llm\s+v?{_VERSION}"),
    "llama.cpp": (r"\b(?:build|version):?\s*=?\s*(\d{3,5})\b", r"\b(b\d{3,5})\b"),
}
# The GPU's own capability, never the one an error says is needed ("at least 8.0").
_CC = (r"has compute capability\s*(\d{1,2}\.\d)", r"Current capability:\s*(\d)(\d)\b",
       r"(?<!least )compute capability[:\s]+(\d{1,2}\.\d)", r"\bsm_?(\d)(\d)\b")
_EXCEPTION = r"\b((?:torch\.(?:cuda\.)?)?[A-Z][A-Za-z]*(?:Error|Exception))\b"
_TENSOR_PARALLEL = r"tensor[-_ ]parallel|--tp\b|tp_size|--num-shard|ProcessGroupNCCL|\bNCCL\b|all[-_ ]?reduce"
_CUDA_GRAPH = r"cuda ?graph|cudagraph|capturing|graph capture"


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

    def as_dict(self) -> dict[str, object]:
        """The recognised setup as the API reports it (`gpu` is the catalog name when known)."""
        return {"engine": self.engine, "version": self.version,
                "gpu": self.gpu.name if self.gpu else self.gpu_text, "compute_capability": self.compute_capability,
                "exception": self.exception, "tensor_parallel": self.tensor_parallel, "cuda_graph": self.cuda_graph}


def engine_of(text: str) -> str | None:
    """The engine whose own names appear in the text, the most specific marker first."""
    for engine, marker in _ENGINE_MARKERS:
        if re.search(marker, text, re.IGNORECASE):
            return engine
    return None


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
                      cuda_graph=bool(re.search(_CUDA_GRAPH, text, re.IGNORECASE)))


def looks_like_a_log(text: str) -> bool:
    """True for pasted output rather than a sentence: an exception, a traceback, a log prefix or an error code."""
    return bool(re.search(rf"{_EXCEPTION}|Traceback|\[(?:E|W|I)\s?\d|\bERROR\b|GGML_ASSERT|Assertion failed|[A-Za-z_]+\.(?:py|cpp|cu|rs):\d+",
                          text))

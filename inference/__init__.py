"""InfraWiki's own inference engine: paged KV cache, continuous batching, chunked prefill. No Django here."""

from inference.engine import LLM, LLMEngine, RequestOutput
from inference.sampling_params import SamplingParams

__all__ = ["LLM", "LLMEngine", "RequestOutput", "SamplingParams"]

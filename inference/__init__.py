"""InfraWiki's own inference engine: paged KV cache, continuous batching, chunked prefill. No Django here."""

import os

# Every decode step streams all weights from memory. On 4 KiB pages the TLB misses cost about a third of
# the projections' time on the 2-core AMX box (24 layers' GEMVs: 59-74 ms, 41-49 ms on 2 MiB pages;
# batch-1 decode 60-71 % -> 72-76 % of the bandwidth bound). torch's CPU allocator asks for transparent
# huge pages for allocations of 2 MiB and more when this is set, and reads it at its first allocation of
# any size: importing the engine before torch allocates anything is what makes it take effect.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

from inference.engine import LLM, LLMEngine, RequestOutput  # noqa: E402
from inference.sampling_params import SamplingParams  # noqa: E402

__all__ = ["LLM", "LLMEngine", "RequestOutput", "SamplingParams"]

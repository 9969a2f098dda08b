"""The digest's topics: a fixed list a subscriber picks from, matched against title and abstract.

Computed at scoring time and stored on the Score row, so the digest filters by topic in SQL.
"""
from __future__ import annotations

import re

TOPICS: dict[str, tuple[str, str]] = {
    # slug: (label shown to people, pattern over title + abstract)
    "kv-cache": ("KV cache and memory management", r"\bKV[- ]?cache|paged ?attention|memory management|KVCache"),
    "scheduling": ("Batching and scheduling", r"\bbatching|schedul|preempt|chunked prefill|SLO|goodput"),
    "disaggregation": ("Prefill/decode disaggregation", r"disaggregat|prefill and decod|prefill/decode"),
    "speculative-decoding": ("Speculative decoding", r"speculative|draft model|Medusa|lookahead decoding"),
    "quantization": ("Quantization and compression", r"quantiz|\bINT[48]\b|\bFP8\b|low[- ]bit|compression|sparsit"),
    "parallelism": ("Parallelism and distributed serving", r"parallelism|distributed|multi-GPU|pipeline parallel|tensor parallel|cluster"),
    "kernels": ("Attention and GPU kernels", r"\bkernels?\b|FlashAttention|attention algorithm|CUDA"),
    "lora-multi-model": ("LoRA and multi-model serving", r"\bLoRA\b|adapters?|multiple LLMs|multi-model|multiplex"),
    "offloading": ("Offloading and limited memory", r"offload|flash memory|limited memory|\bCPU memory|\bSSD\b|storage"),
    "training": ("Training systems", r"\btraining\b|pre-?training|fine-?tuning"),
}
_COMPILED = {slug: re.compile(pattern, re.IGNORECASE) for slug, (_, pattern) in TOPICS.items()}


def topic_choices() -> list[tuple[str, str]]:
    return [(slug, label) for slug, (label, _) in TOPICS.items()]


def topics_for(title: str, abstract: str) -> list[str]:
    """Slugs of every topic whose pattern occurs in the title or abstract (possibly none)."""
    text = f"{title}\n{abstract}"
    return [slug for slug, pattern in _COMPILED.items() if pattern.search(text)]

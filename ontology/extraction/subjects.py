"""The subject of a paper's facts: the system or technique it presents (vLLM, DistServe, S-LoRA).

Runs once per extraction, before the extractors, from the title and abstract: "Name: rest of
title", else the first system-looking name after "we present/propose/introduce", else the most
frequent such name in the abstract; the title's head if nothing looks like a name.
"""
from __future__ import annotations

import re
from collections import Counter

# A system-looking name: has a capital letter after its first character (vLLM, DistServe, S-LoRA).
NAME = r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
_SYSTEMISH = re.compile(rf"\b({NAME})\b")
_STOP = {"LLM", "LLMs", "GPU", "GPUs", "CPU", "KV", "API", "SLO", "SLOs", "TTFT", "TPOT", "AI", "ML", "DNN", "NLP"}


def _looks_like_name(token: str) -> bool:
    """vLLM, DistServe, S-LoRA: a capital after the first character, not an all-caps acronym."""
    return token not in _STOP and bool(re.search(r".[A-Z]", token)) and not token.isupper()


def paper_subject(title: str, abstract: str, body: str = "") -> str:
    """The best name for what the paper presents; 'this paper' when neither text helps.

    Names the abstract introduces are ranked by how often the whole paper (`body`) uses them, so
    the system (vLLM) wins over the technique inside it (PagedAttention).
    """
    head, sep, _ = (title or "").partition(":")
    if sep and 1 <= len(head.split()) <= 5:
        return head.strip()
    names = [token for token in _SYSTEMISH.findall(abstract or "") if _looks_like_name(token)]
    if names:
        text = body or abstract
        uses = Counter({name: len(re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)) for name in set(names)})
        return max(names, key=lambda name: (uses[name], -names.index(name)))
    return (title or "this paper").strip()[:80] or "this paper"

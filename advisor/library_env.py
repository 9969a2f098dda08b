"""Environment variables a pasted log or command sets for the library that failed: each is a setting to rule
out by going back to the library's default.

Runs on every diagnose request, with the features to rule out (advisor.suspects). NCCL reads dozens of NCCL_*
variables (buffer sizes, transports, interfaces, channel counts) that people copy from tuning guides; its
environment page says to use them "if you encounter memory constraint issues" or for performance, so when NCCL
then fails, a variable the text shows set is the first suspect: unset it and rerun. ollama's OLLAMA_* settings are
read the same way when its llama.cpp runner dies (ollama's envconfig lists them: parallel requests, KV cache type,
flash attention, context length). Only the library that the text shows failing is read, and its debugging switches
(which change no behaviour) are never suspects.
"""
from __future__ import annotations

import re
from functools import cache
from typing import Any

from advisor import profiles
from advisor.error_text import Recognised

NCCL_ENV_DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
OLLAMA_ENV = ("https://github.com/ollama/ollama/blob/fb30760996871fa9460115c753afd2c60d4ab0f7/envconfig/config.go")


def _death_of(wrapper: str) -> str:
    """The pattern of `wrapper`'s report that the engine it runs died (`died` of its engine profile's wrapper)."""
    return next(w.died.pattern for eng in profiles.profiles().values() for w in eng.wrappers
                if w.name == wrapper and w.died is not None)


@cache
def _libraries() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str], frozenset[str], str], ...]:
    """(library, what its failure looks like, its variables as set in the text, variables that only change logging,
    the page listing its variables)"""
    return (
        ("NCCL",
         re.compile(r"NCCL(?:_ERROR_\w+| error| WARN)|nccl\w*Error|ProcessGroupNCCL|NcclError", re.IGNORECASE),
         re.compile(r"(?<![\w-])(NCCL_[A-Z0-9_]{2,40})\s*=\s*(?!for\b)([\w.,:^/-]+)"),
         frozenset({"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}),
         NCCL_ENV_DOCS),
        # ollama's runner (llama.cpp inside ollama) dying: its OLLAMA_* settings (parallel requests, KV cache type,
        # flash attention, context length, GPU overhead...) change how the runner is started; where it listens, where
        # models live and its logging do not
        ("ollama",
         re.compile(_death_of("ollama"), re.IGNORECASE),
         re.compile(r"(?<![\w-])(OLLAMA_[A-Z0-9_]{2,40})\s*=\s*([\w.,:^/-]+)"),
         frozenset({"OLLAMA_DEBUG", "OLLAMA_HOST", "OLLAMA_MODELS", "OLLAMA_ORIGINS", "OLLAMA_NOHISTORY",
                    "OLLAMA_NOPRUNE"}),
         OLLAMA_ENV),
    )


def _engines(rec: Recognised) -> list[str]:
    """The recognised engine, else every engine that runs multi-GPU collectives."""
    if rec.engine is not None:
        return [rec.engine]
    return [engine for engine, eng in profiles.profiles().items() if eng.tensor_parallel]


def actions(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """Unset each variable the text sets for a library it shows failing, in the order written."""
    out: list[dict[str, Any]] = []
    for library, failed, assigned, logging_only, source in _libraries():
        if not failed.search(text):
            continue
        names = list(dict.fromkeys(m.group(1) for m in assigned.finditer(text) if m.group(1) not in logging_only))
        for name in names:
            for engine in _engines(rec):
                out.append({"engine": engine, "flag": name, "since": None, "direction": "unset", "value": None,
                            "arithmetic": None,
                            "why": f"The text sets {name} and {library} failed: unset it to run on {library}'s default "
                                   "and rule it out.",
                            "source": source})
    return out

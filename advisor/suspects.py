"""Features to rule out when a crash names no cause: the engine features a flag turns off, most implicated first.

Runs on every diagnose request. An assertion, a segmentation fault, an illegal memory access or a hang says
where the engine stopped, never why, so no catalogued signature and no advice in the message answers it;
what people do then is switch off the engine's optional features one at a time. Each engine profile lists
those features with the flag that turns each off (`switches` in advisor/catalog/engines/*.json, each citing
the flag's help text), so this module keeps no engine knowledge of its own. A feature is ranked by what the
text says about it:

1. the pasted command line turns it on (`--fit on`, `--enable-chunked-prefill`): the likeliest cause;
2. the error uses the words of its help text ("CUDA graph", "all-reduce", "flash attention");
3. it runs by default and the text shows the situation it runs in (custom all-reduce under tensor
   parallelism);
4. it runs by default in the engine (the profile lists those newest default first), offered only for a pasted
   log: a sentence such as "vLLM hangs under load" is left to the literature.

A feature bound to a situation (`when`) is never offered outside it. With no engine recognised only the
features of ranks 1 and 2 are offered, for each engine that has them. A log that reports no crash gets a
feature only when its command line turns it on and its words name it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor import remedies, wrappers
from advisor.error_text import Recognised, looks_like_a_log
from advisor.profiles import EngineProfile, Switch, profile, profiles, wrapper_deaths

MAX_SUSPECTS = 3
# What a crash without a cause looks like: an assertion (GGML_ASSERT, llama.cpp's 2023 LLAMA_ASSERT, a C assert,
# TensorRT-LLM's "Assertion failed", Python's AssertionError: SGLang's and vLLM's internal checks are bare asserts), a
# signal (segmentation fault, bus error, abort, the Linux kernel's "trap invalid opcode" for an illegal instruction, a
# Go panic of ollama's runner: "panic: ...", "goroutine 89 [running]:"), a CUDA fault that names no API misuse
# (illegal memory access or instruction, misaligned address, unspecified launch failure, ECC), a hang ("stuck",
# "freezes"), watchdog or vLLM's warning that a worker stopped taking the scheduler's output ("No available shared
# memory broadcast block found in 60 second", distributed/device_communicators/shm_broadcast.py at 00264800), TGI's
# frame for a shard that raised ("Method Prefill encountered an error"), ggml's GGML_ABORT ("fattn.cu:110: fatal
# error", ggml_abort; its CUDA_CHECK aborts the same way after printing the CUDA error: "ggml-cuda.cu:84: CUDA error",
# ggml_cuda_error in ggml/src/ggml-cuda/ggml-cuda.cu, which names the backend ROCm or MUSA in those builds) and
# SGLang's frame for a worker process that died ("Scheduler hit an exception:", managers/scheduler.py at 0.4.3.post4
# and 0.5.9; "Exception in run_tp_server:", managers/tp_worker.py at 0.3.1.post2) and vLLM V1's EngineDeadError
# ("EngineCore encountered an issue. See stack trace (above) for the root cause.", vllm/v1/engine/exceptions.py), a
# wrapper's report that the engine it runs died (`died` of the engine profiles' wrappers: ollama's runner, LM Studio's
# runtime; the exit status, e.g. Windows' 0xc0000409 for an abort, is all it says), and a Windows process's exit
# status for an abort or an access violation (NTSTATUS 0xC0000409, 0xC0000005).
_CRASH = (
    r"GGML_ASSERT|LLAMA_ASSERT|\bAssertion\b.{0,80}failed|\bassert(?:ion)? failed|\bAssertionError\b|Segmentation fault"
    r"|\bSIGSEGV\b|\bSIGABRT\b|\bSIGBUS\b|core dumped|\bBus error\b|illegal memory access|illegal instruction|misaligned address"
    r"|\btrap invalid opcode\b|^panic: |\bgoroutine \d+ \[running\]"
    r"|unspecified launch failure|\bECC error|\bhang(?:s|ing)?\b|\bhung\b|\bstuck\b|\bfreez(?:e|es|ing)\b|\bfrozen\b|\bdeadlock|watch ?dog"
    r"|No available shared memory broadcast block"
    r"|Method \w+ encountered an error|\bggml_abort\b|\.(?:c|cpp|cu|h):\d+: (?:fatal error|(?:CUDA|ROCm|MUSA) error\b)"
    r"|\bAborted\b"
    r"|Scheduler hit an exception|Exception in run_tp_server|EngineCore encountered an issue"
    r"|exit status 0xc0000409|exit status 0xc0000005")
# A location inside an engine's own source: a Python frame of its package, or a C++/CUDA file and line of its tree
# (an assertion's "(…/tensorrt_llm/plugins/…/gptAttentionCommon.cpp:326)", ggml's "ggml-cuda/fattn.cu:110").
_OWN_CODE = {
    "vllm": r"vllm[/\\][\w/\\.-]+\.(?:py\"?,? line|cu|cuh|cpp|h):? ?\d+",
    "sglang": r"sglang[/\\][\w/\\.-]+\.(?:py\"?,? line|cu|cuh|cpp|h):? ?\d+|sgl[-_]kernel[/\\][\w/\\.-]+:\d+",
    # the server's package, or its console script (bin/text-generation-server) at the traceback's top
    "tgi": r"text_generation_server[/\\][\w/\\.-]+\.py\"?,? line \d+|text-generation-server\\?\"?,? line \d+",
    # and TLLM_CHECK's own report ("[TensorRT-LLM][ERROR] Assertion failed: ..."), which is raised in its C++ code,
    # and its console scripts at a traceback's top (bin/trtllm-build)
    "tensorrt-llm": r"tensorrt_llm[/\\][\w/\\.-]+\.(?:py\"?,? line|cu|cuh|cpp|h):? ?\d+"
                    r"|\[TensorRT-LLM\]\[ERROR\] Assertion failed"
                    r"|trtllm-(?:build|serve|bench)\\?\"?,? line \d+",
    # ggml's own assertion, a ggml source file at the tree's top (ggml-cuda.cu before the 2024 move into ggml/src),
    # and the runners wrappers build from llama.cpp (ollama's, LM Studio's runtimes): their exit, which
    # `_own_code_stop` adds from the profile's wrappers, is a stop inside it, as is a kernel trap in ollama's runner
    # binary ("trap invalid opcode ... in ollama-runner[408000+163000]") and a frame of ollama's own runner around
    # ggml (github.com/ollama/ollama/runner/ollamarunner/runner.go:375), and a frame of llama-cpp-python's binding
    # (llama_cpp/llama.py)
    "llama.cpp": r"(?:ggml|llama|src|common|tools)[/\\][\w/\\.-]+\.(?:c|cpp|cu|cuh|h|m):\d+"
                 r"|\bggml[\w-]*\.(?:c|cpp|cu|cuh|h|m):\d+|GGML_ASSERT|LLAMA_ASSERT|\bin ollama[-_]runner\["
                 r"|github\.com/ollama/ollama/(?:runner|llama|ml)/[\w/.-]+\.go:\d+"
                 r"|llama_cpp[/\\][\w/\\.-]+\.py\"?,? line \d+",
}
# Python exceptions that are programming errors, not refusals of a setting (a ValueError or RuntimeError is how engines
# reject a configuration): raised inside the engine's own code they are an engine bug like a crash, though no
# feature is suspected for them.
# A module the engine's own code imports and its install lacks (ModuleNotFoundError raised from an engine frame) is a
# packaging bug of that release in the same way.
_BUG = re.compile(r"\b(?:AttributeError|TypeError|KeyError|IndexError|NameError|UnboundLocalError|ZeroDivisionError"
                  r"|ModuleNotFoundError)\b")
_REASONS = ("the pasted command line turns it on", "the error names it", "the text shows the situation it runs in",
            "the engine runs it by default")


@dataclass(frozen=True)
class Suspect:
    """A feature to rule out: the engine, the profile's switch, and its rank (0 strongest, see _REASONS)."""

    engine: str
    switch: Switch
    rank: int


@cache
def _crash() -> re.Pattern[str]:
    """_CRASH, and every wrapper's report that the engine it runs died."""
    return re.compile(f"{_CRASH}|{wrapper_deaths()}", re.IGNORECASE | re.DOTALL)


def crashed(text: str) -> bool:
    """True when the text reports a crash or hang that states no cause of its own."""
    return bool(_crash().search(text))


def _written_value(text: str, eng: EngineProfile, key: str) -> str | None:
    """The value the pasted command line, or the engine's dump of its arguments (vLLM's "non-default args:
    {'enable_chunked_prefill': True}", "with config: ... enforce_eager=False"), gives flag `key` ("" for a bare
    switch), or None when the text does not set it."""
    for name in eng.spellings(key):
        if not name.startswith("-"):
            continue
        found = re.search(rf"(?<![\w-]){re.escape(name)}(?:[ =]+(?!-)([\w.-]+))?(?![\w-])", text)
        if found:
            return found.group(1) or ""
    dumped = re.search(rf"(?<![\w-])['\"]?{re.escape(key)}['\"]?\s*[:=]\s*(\{{[^}}]*\}}|'[^']*'|\"[^\"]*\"|[^,}}\s)]+)", text)
    return dumped.group(1).strip("'\"") if dumped else None


_OFF = ("false", "0", "off", "no", "none", "{}")


def _env_value(text: str, env: str) -> str | None:
    """The value the text assigns to environment variable `env` (`GGML_SYCL_FA_ONEDNN=0`), None when unassigned."""
    assigned = re.search(rf"(?<![\w-]){re.escape(env)}\s*=\s*([\w.-]+)", text)
    return assigned.group(1) if assigned else None


def _turned_on(text: str, eng: EngineProfile, sw: Switch) -> bool:
    """The command line turns the feature on: its enabling flag is written (a switch dropped to turn it off), or
    its flag is written with a value other than the one that turns it off (`--fit on`); for a variable's code path,
    the variable set to another value, or the flag of the feature it is a path of turned on (`-fa on`)."""
    if sw.env is not None:
        assigned = _env_value(text, sw.env)
        if assigned is not None:
            return assigned.lower() != (sw.value or "").lower()
        under = _written_value(text, eng, sw.under) if sw.under else None
        return under is not None and under.lower() not in _OFF
    assert sw.knob is not None
    written = _written_value(text, eng, sw.knob)
    if written is None:
        return False
    if sw.direction == "unset":
        return written.lower() not in _OFF
    return sw.value is not None and written != "" and written.lower() != sw.value.lower()


def _turned_off(text: str, eng: EngineProfile, sw: Switch) -> bool:
    """The text already sets the value that turns the feature off (`-fa off`, `GGML_SYCL_FA_ONEDNN=0`): ruled out."""
    if sw.value is None:
        return False
    if sw.env is not None:
        assigned = _env_value(text, sw.env)
        return assigned is not None and assigned.lower() == sw.value.lower()
    written = _written_value(text, eng, sw.knob) if sw.knob is not None else None
    return written is not None and written.lower() == sw.value.lower()


def _rank(text: str, eng: EngineProfile, sw: Switch, rec: Recognised, crash: bool) -> int | None:
    if sw.when == "tensor_parallel" and not rec.tensor_parallel:
        return None
    if sw.requires is not None and not re.search(sw.requires, text, re.IGNORECASE):
        return None
    if sw.wrapper is not None and getattr(wrappers.running(eng.id, text), "name", None) != sw.wrapper:
        return None
    if rec.version is not None and (not sw.covers(rec.version) or (
            sw.knob is not None and eng.flag(sw.knob, rec.version) is None)):
        return None
    if _turned_off(text, eng, sw):
        return None
    on = _turned_on(text, eng, sw)
    # the flag's own name on the command line is no mention of the feature by the error
    said = text
    for name in eng.spellings(sw.knob) if sw.knob is not None else [sw.env or ""]:
        said = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", said)
    if sw.knob is not None:
        said = re.sub(rf"['\"]?{re.escape(sw.knob)}['\"]?\s*[:=]", " ", said)  # nor its key in an argument dump
    named = any(re.search(w, said, re.IGNORECASE) for w in sw.words)
    if not crash:
        return 0 if on and named else None
    if on:
        return 0
    if named:
        return 1
    if sw.default_on and rec.engine == eng.id:
        if sw.when is not None:
            return 2
        return 3 if looks_like_a_log(text) else None
    return None


def suspects(text: str, rec: Recognised) -> list[Suspect]:
    """The features to rule out for this text, most implicated first (at most MAX_SUSPECTS); none when the
    text reports no crash and its command line turns on no feature its words name."""
    crash = crashed(text)
    engines = [rec.engine] if rec.engine is not None else list(profiles())
    found = []
    for order, engine in enumerate(engines):
        eng = profile(engine)
        for position, sw in enumerate(eng.switches):
            rank = _rank(text, eng, sw, rec, crash)
            if rank is not None:
                found.append((rank, order, position, Suspect(engine, sw, rank)))
    found.sort(key=lambda f: f[:3])
    return [s for *_, s in found][:MAX_SUSPECTS]


def action(s: Suspect, rec: Recognised) -> dict[str, Any] | None:
    """The switch as a diagnose action, spelt as the recognised release (else the newest) spells it; None when
    that release has no such flag."""
    eng = profile(s.engine)
    if s.switch.env is not None:
        return {"engine": s.engine, "flag": f"{s.switch.env}={s.switch.value}", "since": None, "direction": "set",
                "value": s.switch.value, "arithmetic": None,
                "why": f"Turn off {s.switch.feature} to rule it out: {_REASONS[s.rank]}.", "source": s.switch.source}
    assert s.switch.knob is not None
    version = rec.version if rec.engine == s.engine else None
    spelling = remedies.spelling_at(eng, s.switch.knob, version)
    if spelling is None:
        return None
    flag = eng.spelt_as(s.switch.knob, rec.options) or spelling[0]
    return {"engine": s.engine, "flag": flag, "since": spelling[1], "direction": s.switch.direction,
            "value": s.switch.value, "arithmetic": None,
            "why": f"Turn off {s.switch.feature} to rule it out: {_REASONS[s.rank]}.",
            "source": s.switch.source, "aliases": eng.other_spellings(s.switch.knob, flag)}


def _own_code_stop(text: str, rec: Recognised) -> re.Match[str] | None:
    """Where a crash that names no cause, or a Python programming error (an AttributeError, TypeError, KeyError...),
    stops inside the recognised engine's own code (a file and line when the text gives one); None otherwise."""
    if rec.engine is None or rec.engine not in _OWN_CODE or not (crashed(text) or _BUG.search(text)):
        return None
    # a wrapper's report that the engine died is a stop inside the engine too
    found = list(re.finditer(f"{_OWN_CODE[rec.engine]}|{wrapper_deaths(rec.engine)}", text))
    # name a file and line when the text gives one, rather than a marker such as the assertion's prefix
    return next((m for m in found if re.search(r"\d", m.group(0))), found[0]) if found else None


def release_moves(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """For a stop inside the recognised engine's own code (`_own_code_stop`), an engine bug: an upgrade, since a later
    release may have fixed it, then a downgrade, since a bug a recent release brought in is gone in the release before
    it. Of the 55 own-code stops among the real threads of tests/data/diagnose_errors.jsonl, 25 were resolved by an
    upgrade and 9 by going back a release, so the text need not say that an update broke it (advisor.regressions
    answers the texts that do, naming the release that worked). Offered after the features to rule out; InfraWiki
    holds no release note naming the crash, so neither names a release. [] for a crash outside the engine's code."""
    where = _own_code_stop(text, rec)
    if where is None or rec.engine is None:
        return []
    eng = profile(rec.engine)
    before = f" the release before {rec.version}" if rec.version else " the release you ran before"
    return [remedies.release_move(
                rec.engine, "upgrade", None,
                f"The crash stops inside {eng.name}'s own code ({where.group(0)}) and states no cause. If no feature "
                f"above is the cause it is an engine bug: try a newer {eng.name} release (InfraWiki has no release note "
                "naming this crash, so no release is named).", eng.docs),
            remedies.release_move(
                rec.engine, "downgrade", None,
                f"If the crash began after an update, go back to{before}: a bug the newer {eng.name} release brought in "
                "is not in it. Report it with both versions.", eng.docs)]

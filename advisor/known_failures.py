"""Recognise a pasted error: which catalogued failure it is, on which engine and release, and the
findings (fix first: flag, number, source) diagnose answers with before any technique.

Runs on every diagnose request. A signature applies when one of its patterns matches, the engine the
text names (if any) is the signature's, the release the text shows (if any) is in its range, and —
for a failure bound to old GPUs — the text's GPU is below the capability. Engine-specific signatures
outrank the common ones (a CUDA out-of-memory line is also printed under most engine errors).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from advisor import remedies
from advisor.error_text import Recognised, recognise, runtime_form, unwrapped
from advisor.failures import Fix, Signature, signatures
from advisor.versions import at_least

_WHEN = {"cuda_graph": lambda r: r.cuda_graph, "tensor_parallel": lambda r: r.tensor_parallel}


@dataclass(frozen=True)
class Match:
    """A signature that applies to the text, the engine it is read for (None: any), and its numbers."""

    signature: Signature
    engine: str | None
    groups: dict[str, str | None]
    span: int


def _applies(sig: Signature, file_engine: str | None, rec: Recognised) -> bool:
    if file_engine is not None and rec.engine is not None and rec.engine != file_engine:
        return False
    if rec.engine == file_engine and not sig.covers(rec.version):
        return False
    if rec.compute_capability is None:
        return not sig.cc_required
    return sig.cc_below is None or not at_least(rec.compute_capability, sig.cc_below)


def match(text: str, pasted: str | None = None) -> tuple[Recognised, list[Match]]:
    """What the text says about the setup, and the signatures that apply, most specific first; `pasted`, the
    text as pasted (line breaks kept), is also read with its breaks taken out, for a log wrapped mid-message, and
    the text with an older CUDA check's "CUDA error <code> at <file>:<line>:" read as "CUDA error:"."""
    rec = recognise(text)
    rejoined = unwrapped(pasted) if pasted else None
    canonical = runtime_form(text)  # an older "CUDA error 2 at file:line: out of memory" read as "CUDA error: ..."
    found: list[Match] = []
    for file_engine, sig in signatures():
        hit = (sig.match(text) or (sig.match(rejoined) if rejoined else None)
               or (sig.match(canonical) if canonical else None))
        if hit is None or not _applies(sig, file_engine, rec):
            continue
        found.append(Match(sig, file_engine or rec.engine, hit.groupdict(), hit.end() - hit.start()))
    if any(not m.signature.fallback for m in found):
        found = [m for m in found if not m.signature.fallback]
    found.sort(key=lambda m: (m.signature.id not in engine_ids(), -m.span))
    if rec.engine is None:
        engines = {m.engine for m in found if m.engine is not None}
        if len(engines) == 1:  # the only engine whose own error string matched
            rec = recognise(text, engine_hint=engines.pop())
    return rec, found


def engine_ids() -> set[str]:
    """Ids of the signatures that are one engine's own error strings (not the common file's)."""
    return {s.id for engine, s in signatures() if engine is not None}


def _ordered(fixes: list[Fix], rec: Recognised) -> list[Fix]:
    """The fixes in catalog order, those for the situation the text shows (graph capture, TP) first."""
    return sorted(fixes, key=lambda f: not (f.when in _WHEN and _WHEN[f.when](rec)))


def actions(m: Match, rec: Recognised) -> list[dict[str, Any]]:
    """The fixes of a match as actions, for its engine or (engine unknown) for every engine it lists."""
    engines = [m.engine] if m.engine is not None else list(m.signature.fixes)
    version = rec.version if rec.engine in engines else None
    out = []
    for engine in engines:
        for fix in _ordered(m.signature.fixes.get(engine, []), rec):
            act = remedies.action(engine, version, m.signature, fix, m.groups, rec)
            if act is not None:
                out.append(act)
                if version is None and fix.knob is not None:
                    out += remedies.earlier_spellings(engine, fix.knob, act)
    return out


def reports_for(sig: Signature, issues: list[dict[str, str]]) -> list[dict[str, str]]:
    """Crawled issues whose titles carry the signature's own error string."""
    return [i for i in issues if any(p.search(i["title"]) for p in sig.compiled())]


def numbers(m: Match) -> dict[str, float]:
    """The numbers the matched text states, by the pattern's group names."""
    out = {}
    for name, raw in m.groups.items():
        if raw is not None and re.fullmatch(r"[\d.,]+", raw):
            out[name] = float(raw.replace(",", ""))
    return out

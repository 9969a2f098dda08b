"""From a recognised failure to the actions that fix it: each fix of the signature spelt as the engine
and release spell the flag, with the number to set and the arithmetic behind it when the text states
the setup ("max seq len (4096) ... KV cache (3664)" -> set --max-model-len 3664).

Runs for every signature diagnose matches. The numbers come from the regex groups of the matched
pattern; compatibility answers (dtype and quantization by compute capability, the FP8 KV cache) come
from the engine profile through advisor.rules, so the capability tables live in one place.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from advisor import rules
from advisor.error_text import Recognised
from advisor.failures import Fix, Signature
from advisor.profiles import EngineProfile, profile
from advisor.versions import at_least, vkey

Action = dict[str, Any]


def release_move(engine: str | None, direction: str, value: str | None, why: str, source: str | None, *,
                 since: str | None = None, arithmetic: str | None = None, target: str | None = None) -> Action:
    """An upgrade or downgrade as a diagnose action: `flag` is the direction itself (a release, not a flag, moves),
    `value` the release when one is known, `target` the package that moves when it is not the engine itself."""
    act: Action = {"engine": engine, "flag": direction, "since": since, "direction": direction, "value": value,
                   "arithmetic": arithmetic, "why": why, "source": source}
    if target is not None:
        act["target"] = target
    return act


def _num(groups: dict[str, str | None], name: str) -> float | None:
    raw = groups.get(name)
    if raw is None:
        return None
    try:
        return float(raw.replace(",", ""))
    except ValueError:
        return None


def _gib(groups: dict[str, str | None], name: str) -> float | None:
    """A memory figure in GiB from `name` and its `name_unit` group (MiB, KiB, GiB)."""
    value = _num(groups, name)
    if value is None:
        return None
    unit = (groups.get(f"{name}_unit") or "GiB").lower()
    return value / {"kib": 1024 ** 2, "mib": 1024, "gib": 1}.get(unit, 1)


def _int(value: float) -> str:
    return str(int(value))


def _at_most(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    limit, current = (_num(g, a) for a in (fix.args + [""])[:2])
    if limit is None:
        return None, None
    said = f" instead of {_int(current)}" if current is not None else ""
    return _int(limit), f"at most {_int(limit)}{said}: the text says only {_int(limit)} fit"


def _at_least(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    need, current = (_num(g, a) for a in (fix.args + [""])[:2])
    if need is None:
        return None, None
    said = f" (now {_int(current)})" if current is not None else ""
    return _int(need), f"at least {_int(need)}{said}: the text asks for {_int(need)}"


def _sum_at_least(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    parts = [_num(g, a) for a in fix.args]
    if any(p is None for p in parts) or not parts:
        return None, None
    total = sum(p for p in parts if p is not None)
    return _int(total), " + ".join(_int(p) for p in parts if p is not None) + f" = {_int(total)}: set {flag} to at least that"


def _below(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    failed = _num(g, fix.args[0]) if fix.args else None
    if failed is None:
        return None, None
    half = max(1, int(failed) // 2)
    return _int(half), (f"{_int(failed)} did not fit; any value below it may, and halving ({_int(failed)} / 2 = {half}) "
                        "is a first step: raise it again while start-up still passes")


def _divisor(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    """The largest size that divides the heads and fits the GPUs asked for, and the next one above."""
    heads, asked = (_num(g, a) for a in (fix.args + ["", ""])[:2])
    if heads is None:
        return None, None
    n, gpus = int(heads), int(asked or 1)
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    fits = max(d for d in divisors if d <= gpus)
    above = next((d for d in divisors if d > gpus), None)
    more = f"; the next size that divides them is {above}" if above else ""
    return str(fits), (f"{n} heads split evenly over {', '.join(map(str, divisors))} GPUs: on {gpus} GPUs the largest "
                       f"that fits is {fits}{more}")


def _memory_shortfall(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, version: str | None,
                      **_: Any) -> tuple[str | None, str | None]:
    """A fraction-of-memory knob lowered by the share of the GPU the failed allocation lacked."""
    want, free, total = _gib(g, "alloc"), _gib(g, "free"), _gib(g, "total")
    if want is None or free is None or total is None or total <= 0:
        return None, None
    default = eng.memory_fraction.default
    short = max(want - free, 0.0)
    drop = math.ceil(100 * short / total) / 100
    if drop <= 0:
        return None, None
    new = round(default - drop, 2)
    return f"{new:.2f}", (f"the allocation lacked {want:.2f} − {free:.2f} = {short:.2f} GiB of {total:.2f} GiB "
                          f"({drop:.2f} of the GPU); from the default {default} that is {default} − {drop:.2f} = {new:.2f} "
                          "or lower (less if other processes share the GPU)")


def _free_fraction(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    free, total = _num(g, "free"), _num(g, "total")
    if free is None or total is None or total <= 0:
        return None, None
    fraction = math.floor(100 * free / total) / 100
    return f"{fraction:.2f}", f"{free:g} of {total:g} GiB are free at start-up: {free:g} / {total:g} = {free / total:.3f}, so at most {fraction:.2f}"


def _kv_shortfall(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, **_: Any) -> tuple[str | None, str | None]:
    have, want = (_num(g, a) for a in (fix.args + ["", ""])[:2])
    if have is None or want is None or have <= 0:
        return None, None
    return None, (f"the KV cache must hold {_int(want)} tokens and holds {_int(have)}: {_int(want)} / {_int(have)} = "
                  f"{want / have:.2f}x, i.e. {100 * (want / have - 1):.0f}% more KV memory than the default fraction "
                  f"{eng.memory_fraction.default} leaves")


def _cc_of(rec: Recognised, g: dict[str, str | None]) -> str | None:
    cc = g.get("cc")
    if cc and re.fullmatch(r"\d{2}", cc):
        cc = f"{cc[0]}.{cc[1]}"
    return cc or rec.compute_capability


def _dtype_for_gpu(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, rec: Recognised,
                   **_: Any) -> tuple[str | None, str | None]:
    cc = _cc_of(rec, g)
    if cc is None:
        return None, None
    wanted = g.get("dtype") or "bfloat16"
    refused = rules.dtype_refusal(eng, cc, wanted)
    usable = [d for d in eng.dtypes if rules.dtype_refusal(eng, cc, d) is None and d != wanted]
    if refused is None or not usable:
        return None, None
    return usable[0], (f"{eng.name} needs compute capability ≥ {refused.min_cc} for {wanted}; this GPU has {cc}; "
                       f"{usable[0]} runs from {eng.dtypes[usable[0]].min_cc}")


def _quantization_for_gpu(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, version: str | None,
                          rec: Recognised, **_: Any) -> tuple[str | None, str | None]:
    cc = _cc_of(rec, g)
    if cc is None:
        return None, None
    method = (g.get("method") or "").lower()
    options = [name for name, q in eng.quantization.items()
               if name != method and at_least(cc, q.min_cc) and (version is None or q.covers(version))
               and q.bits <= 8]
    if not options:
        return None, None
    best = min(options, key=lambda n: eng.quantization[n].bits)
    return best, (f"{method or 'this method'} needs a newer GPU; on compute capability {cc} {eng.name} has "
                  f"{', '.join(options)} kernels (needs ≥ {eng.quantization[best].min_cc} for {best})")


def _kv_dtype_for_gpu(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, version: str | None,
                      rec: Recognised, **_: Any) -> tuple[str | None, str | None]:
    cc = rec.compute_capability
    options = [name for name, rule in eng.kv_cache_dtypes.items()
               if (version is None or rule.covers(version)) and (cc is None or rule.min_cc is None or at_least(cc, rule.min_cc))]
    if not options:
        return None, None
    return options[0], "an 8-bit KV cache stores each value in 1 byte instead of 2: about twice the tokens in the same memory"


def _model_support(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, **_: Any) -> tuple[str | None, str | None]:
    arch = (g.get("arch") or "").strip("'\" ")
    support = next((s for name, s in eng.models.items() if name.lower() in arch.lower()), None) if arch else None
    if support is None:
        return None, None
    return support.since, f"{arch} is supported from {eng.name} {support.since}"


def _softcap_release(fix: Fix, g: dict[str, str | None], flag: str, eng: EngineProfile, **_: Any) -> tuple[str | None, str | None]:
    softcap = eng.attention.softcap if eng.attention else None
    if softcap is None:
        return None, None
    return softcap.xformers_since, f"the XFormers backend implements soft-capping from {eng.name} {softcap.xformers_since}"


# An AMD GPU's LLVM target: gfx + major version + one hex digit each for minor and stepping (gfx1031 is 10.3.1,
# gfx90a is 9.0.10), the x.y.z that HSA_OVERRIDE_GFX_VERSION takes.
_GFX_TARGET = re.compile(r"gfx(\d+?)([0-9a-f])([0-9a-f])", re.IGNORECASE)


def _gfx_version(target: str) -> tuple[int, int, int] | None:
    found = _GFX_TARGET.fullmatch(target.strip())
    return (int(found.group(1)), int(found.group(2), 16), int(found.group(3), 16)) if found else None


def _gfx_override(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    """The supported target of the GPU's own major.minor family, lowest stepping first, as x.y.z: ollama's docs run
    the RX 5400 (gfx1034) as gfx1030 with HSA_OVERRIDE_GFX_VERSION=10.3.0. None when the list holds no such target
    (another family's kernels would not run)."""
    gpu = _gfx_version(g.get(fix.args[0]) or "") if fix.args else None
    supported = re.findall(r"gfx[0-9a-f]+", g.get(fix.args[1]) or "", re.IGNORECASE) if len(fix.args) > 1 else []
    if gpu is None:
        return None, None
    family = sorted(v for v in (_gfx_version(t) for t in supported) if v is not None and v[:2] == gpu[:2])
    if not family:
        return None, None
    major, minor, step = family[0]
    return (f"{major}.{minor}.{step}",
            f"{g.get(fix.args[0])} is {'.'.join(map(str, gpu))}, which the library lacks; it ships "
            f"gfx{major}{minor:x}{step:x} ({major}.{minor}.{step}), the same {major}.{minor} family")


def _from_text(fix: Fix, g: dict[str, str | None], flag: str, **_: Any) -> tuple[str | None, str | None]:
    """The value the message itself names (vLLM names the faster kernel it would pick)."""
    value = g.get(fix.args[0]) if fix.args else None
    return (value, f"the message names {value}") if value else (None, None)


_RULES: dict[str, Callable[..., tuple[str | None, str | None]]] = {
    "at_most": _at_most, "at_least": _at_least, "sum_at_least": _sum_at_least, "below": _below, "divisor": _divisor,
    "memory_shortfall": _memory_shortfall, "free_fraction": _free_fraction, "kv_shortfall": _kv_shortfall,
    "dtype_for_gpu": _dtype_for_gpu, "quantization_for_gpu": _quantization_for_gpu,
    "kv_dtype_for_gpu": _kv_dtype_for_gpu, "model_support": _model_support, "softcap_release": _softcap_release,
    "from_text": _from_text, "gfx_override": _gfx_override,
}


def spelling_at(eng: EngineProfile, key: str, version: str | None) -> tuple[str, str | None] | None:
    """The flag as this release spells it, with the release that spelling starts at; with no release known
    the newest spelling; None when the text's release has no such flag (it came later or was removed)."""
    spellings = eng.flags[key]
    if version:
        spelt = eng.flag(key, version)
        if spelt is None:
            return None
        span = next(s for s in spellings if s.name == spelt)
        return spelt, span.since
    newest = max(spellings, key=lambda s: vkey(s.since) if s.since else ())
    return newest.name, newest.since


def earlier_spellings(engine: str, key: str, act: Action) -> list[Action]:
    """With no release in the text, the same fix under each older spelling of a renamed flag (TGI's
    --max-input-length before --max-input-tokens), each with the last release that spells it so, so a
    person on an old release is not handed a flag their launcher rejects."""
    spellings = profile(engine).flags[key]
    return [{**act, "flag": s.name, "since": s.since, "until": s.until}
            for s in spellings if s.name != act["flag"] and s.until is not None]


def action(engine: str, version: str | None, sig: Signature, fix: Fix, groups: dict[str, str | None],
           rec: Recognised) -> Action | None:
    """One fix as an action `{engine, flag, since, direction, value, arithmetic, why, source}`; None when
    its rule finds the fix does not apply (no usable dtype on this GPU, say)."""
    eng = profile(engine)

    def ruled(flag: str) -> tuple[str | None, str | None]:
        """The number the fix's rule works out from the text, with its arithmetic; (None, None) without a rule."""
        return _RULES[fix.rule](fix, groups, flag, eng=eng, version=version, rec=rec) if fix.rule else (None, None)

    package = fix.package or (groups.get(fix.package_from) if fix.package_from else None)
    if fix.package_from is not None and package is None:
        return None  # the pattern that matched names no library, so there is none to move
    if fix.direction == "upgrade":
        computed, arithmetic = ruled("")
        value = computed or fix.to
        if version and value and package is None and at_least(version, value):
            return None  # already on a release with the fix
        return release_move(engine, "upgrade", value, fix.why, fix.source or sig.source, since=value,
                            arithmetic=arithmetic or (f"from {version} to {value} or later" if version and value else None),
                            target=package)
    if fix.direction == "downgrade":  # back to a release without the failure (the one that built an engine, say)
        return release_move(engine, "downgrade", fix.to, fix.why, fix.source or sig.source, target=package)
    if fix.env is not None:
        computed, arithmetic = ruled(fix.env)
        value = computed or fix.value
        flag = fix.env if value is None else f"{fix.env}={value}"
        return {"engine": engine, "flag": flag, "since": None, "direction": fix.direction,
                "value": value, "arithmetic": arithmetic, "why": fix.why, "source": fix.source or sig.source}
    # a `docker run` option of the engine's container, or a CMake option of its own build (set when rebuilding):
    # neither is the engine's flag, so both are the same for every release and say where they go
    if fix.container is not None or fix.build is not None:
        flag, applies_to = ((fix.container, "docker run") if fix.container is not None
                            else (f"{fix.build}={fix.value}", "cmake"))
        return {"engine": engine, "flag": flag, "since": None, "direction": fix.direction,
                "value": fix.value, "arithmetic": None, "why": fix.why, "source": fix.source or sig.source,
                "applies_to": applies_to}
    assert fix.knob is not None
    spelling = spelling_at(eng, fix.knob, version)
    if spelling is None:
        return None
    flag, since = eng.spelt_as(fix.knob, rec.options) or spelling[0], spelling[1]
    computed, arithmetic = ruled(flag)
    if computed is None and fix.rule in ("dtype_for_gpu", "quantization_for_gpu", "kv_dtype_for_gpu") and (
            rec.compute_capability or fix.rule == "kv_dtype_for_gpu"):
        return None  # the profile says no such option exists on this GPU/release
    value = computed or fix.value
    return {"engine": engine, "flag": flag, "since": since, "direction": fix.direction, "value": value,
            "arithmetic": arithmetic, "why": fix.why, "source": fix.source or sig.source,
            "aliases": eng.other_spellings(fix.knob, flag)}

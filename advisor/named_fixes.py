"""Fixes a pasted error names itself: "Try increasing `gpu_memory_utilization` or decreasing
`max_model_len`", "You need to decrease `--max-batch-prefill-tokens`", "set NCCL_P2P_DISABLE=1".

Runs on every diagnose request, after the failure catalog. Engines phrase their advice as a verb and a
setting; this reads every setting the engine profiles know (advisor/catalog/engines/*.json, in any
spelling: `--max-model-len`, `max_model_len`, `max-model-len`, a short option such as `-ngl`) and every
engine or library environment variable (NCCL_*, VLLM_*, SGLANG_*, ...), and keeps those that a directive
word shortly before them governs — so a message's own advice counts, while the person's command line
echoed in the log (a flag with no verb before it) does not. The flag is spelt as the recognised engine
and release spell it, so an error written for one engine's option names still answers with that
engine's flag. A message the catalog does not know is still answered with what it asks for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor import profiles
from advisor.error_text import Recognised
from advisor.versions import vkey

# Directive words as word starts ("increas" covers increase/increasing); a comparative followed by
# "than" states a comparison ("max_num_batched_tokens (2048) is smaller than max_model_len"), not advice.
# Letters only after the stem: inside a setting's own name ("remove_input_padding=True", "use_cache") the
# word is no directive.
_DIRECTIONS: tuple[tuple[str, str], ...] = (
    ("raise", r"increas[a-z]*|rais(?:e|es|ing)|larger|bigger|higher|more"),
    ("lower", r"decreas[a-z]*|reduc[a-z]*|lower(?:ing)?|smaller|less|shrink[a-z]*"),
    ("unset", r"disabl[a-z]*|unset[a-z]*|remov[a-z]*|without|turn(?:ing)? off"),
    ("set", r"set|setting|enabl[a-z]*|use|pass|passing|add|adding|try|trying|specify[a-z]*|provid[a-z]*|consider[a-z]*"
            r"|turn(?:ing)? on|choos[a-z]*|select[a-z]*|requir[a-z]*"),
)
_DIRECTIVE = re.compile(r"(?<![\w-])(?:" + "|".join(f"(?P<{d}>{w})" for d, w in _DIRECTIONS) + r")\b(?!\s+than\b)",
                        re.IGNORECASE)
# How far before a setting its verb may stand: "Try increasing `gpu_memory_utilization` or decreasing ...".
_WINDOW = 60
# A value after "=": dots only inside it ("0.95", not the sentence's full stop).
_VALUE = r"[\w:-]+(?:\.[\w:-]+)*"
# Environment variables of the engines, the libraries under them and the wrappers around them (SGLang documents both
# its SGL_ and SGLANG_ prefixes: docs/references/environment_variables.md; ollama's own messages name OLLAMA_ ones:
# "Set OLLAMA_TMPDIR for server to a writable executable directory", llm/server.go at v0.5.7).
_ENV = re.compile(r"\b((?:NCCL|VLLM|SGLANG|SGL|TRTLLM|TLLM|CUDA|PYTORCH|TORCH|HF|GGML|LLAMA|TGI|FLASHINFER|OLLAMA)"
                  r"_[A-Z0-9_]{2,60})"
                  r"(?:\s*=\s*(" + _VALUE + "))?")
# An environment variable that switches a feature on ("HF_HUB_ENABLE_HF_TRANSFER", "VLLM_USE_V1").
_ENV_SWITCH = re.compile(r"_(?:ENABLE|USE)_")
# A clause boundary a directive does not reach across: a sentence end or a line break.
_BOUNDARY = re.compile(r"[.!?;](?:\s|$)|\n")


# A launcher or config that rejects a flag's value names the flag and often the value it meant: clap (TGI's launcher)
# "invalid value 'True' for '--disable-custom-kernels' ... a similar value exists: 'true'", argparse (vLLM,
# SGLang) "argument --dtype: invalid choice: 'bf16' (choose from ...)", "argument --max-model-len: invalid int
# value: '8k'", "argument --tensor-parallel-size: expected one argument". The fix is to set that flag validly.
_REJECTED = re.compile(r"(?:invalid value '[^'\n]*' for '(?P<flag>-{1,2}[\w-]+)[^'\n]*'"
                       # argparse also refuses a value of the wrong type and a flag left without its value
                       r"|argument (?P<argflag>-{1,2}[\w-]+)(?:/-{1,2}[\w-]+)?: (?:invalid (?:choice|\w+ value): '[^'\n]*'"
                       r"|expected (?:one|at least one) argument)"
                       # clap on a flag this release does not have: "unexpected argument '--max-input-length' found
                       # ... tip: a similar argument exists: '--max-input-tokens'" (the flag to set is the similar one).
                       r"|unexpected argument '-{1,2}[\w-]+' found.{0,200}?a similar argument exists: "
                       r"'(?P<renamed>-{1,2}[\w-]+)'"
                       # llama.cpp's own parser (common/arg.cpp): "error while handling argument \"--flash-attn\": expected
                       # value for argument" (a flag that now takes a value, or a value it does not accept).
                       r"|error while handling argument \"(?P<llflag>-{1,2}[\w-]+)\""
                       # pydantic, which newer vLLM configs are checked by, names the field it refused on the line
                       # after the model: "1 validation error for ModelConfig\nenforce_eager\n  Input should be a valid
                       # boolean [type=bool_type, input_value=None]".
                       r"|validation errors? for \w+\s+(?P<pyfield>(?-i:[a-z][a-z0-9_]+))\s+"
                       r"(?:Input should|Field required|Extra inputs))"
                       r"(?:.{0,200}?a similar value exists: '(?P<similar>[^'\n]+)')?", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Named:
    """A setting the text asks to change: the profile key (None for an environment variable), the
    engine whose spelling named it, the words as written, the direction and a value the text gives."""

    key: str | None
    engine: str | None
    written: str
    direction: str
    value: str | None
    at: int
    spelt: str | None = None  # the spelling to answer in, when the message's own is the engine's (a refused "-c")


@cache
def _spellings() -> dict[str, list[tuple[str, str]]]:
    """Each way a profile flag is written, normalised (lower case, '_' for '-', no leading dashes), to
    the (engine, key) pairs it names: the engine's own spellings and documented aliases first, then the
    bare key."""
    table: dict[str, list[tuple[str, str]]] = {}
    for engine, eng in profiles.profiles().items():
        for key in eng.flags:
            for written in eng.spellings(key) + [key]:
                norm = profiles.flag_key(written).lower()
                if len(norm) < 2 or (engine, key) in table.get(norm, []):
                    continue
                table.setdefault(norm, []).append((engine, key))
    return table


@cache
def _mention() -> re.Pattern[str]:
    """Any spelling of any profile flag, as a whole token (longest first so "--cache-type-k" is not "-k")."""
    forms: set[str] = set()
    for norm in _spellings():
        forms.add(re.escape(norm).replace("_", "[-_ ]"))
    body = "|".join(sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])-{{0,2}}(?P<name>{body})(?![\w-])(?:\s*=\s*(?P<value>{_VALUE}))?", re.IGNORECASE)


def _direction(text: str, start: int) -> str | None:
    """The direction of the last directive word in the clause just before `start`."""
    before = text[max(0, start - _WINDOW):start]
    cut = list(_BOUNDARY.finditer(before))
    if cut:
        before = before[cut[-1].end():]
    found = list(_DIRECTIVE.finditer(before))
    if not found:
        return None
    last = found[-1]
    return next(d for d, _ in _DIRECTIONS if last.group(d))


# A comparison after a setting: "max_num_batched_tokens (2048) is smaller than max_model_len" states what went
# wrong (raise the smaller side), "`max_model_len` must be >= ..." or "is no smaller than" what is required.
_REQUIRE = r"(?:(?P<modal>must|should|needs? to|has to|have to)\s+)?(?:be|is|are)\s+(?:(?P<neg>no|not)\s+)?"
_CMP = r"(?P<cmp>>=|<=|>|<|greater|larger|bigger|higher|more|at least|smaller|less|lower|fewer|at most)"
_LEFT = re.compile(r"^[`'\"]?\s*(?:\(\s*[\d.,]+\s*\)\s*)?" + _REQUIRE + _CMP, re.IGNORECASE)
_RIGHT = re.compile(_REQUIRE + _CMP + r"(?:\s+than)?(?:\s+or\s+equal\s+to)?\s*[`'\"]?$", re.IGNORECASE)
_BIG = frozenset((">=", ">", "greater", "larger", "bigger", "higher", "more", "at least"))


# A setting that exceeds something is over what fits ("max_num_seqs (1024) exceeds available Mamba cache blocks
# (614)": lower it); a setting that is exceeded is the limit to raise ("the prompt exceeds max_model_len").
_EXCEEDS_LEFT = re.compile(r"^[`'\"]?\s*(?:\(\s*[\d.,]+\s*\)\s*)?(?:exceed(?:s|ed|ing)?|is (?:over|above|beyond))\b",
                           re.IGNORECASE)
_EXCEEDS_RIGHT = re.compile(r"(?:exceed(?:s|ed|ing)?|is (?:over|above|beyond))\s+(?:the\s+)?(?:configured\s+)?[`'\"]?$",
                            re.IGNORECASE)
# A setting said to clash with another feature is to be switched off: "flash_attn is not compatible with LoRA",
# "--enable-chunked-prefill cannot be used with prefix caching", "X is not supported with Y".
_CLASHES = re.compile(r"^[`'\"]?\s*(?:\([^)\n]{0,20}\)\s*)?(?:(?:is|are)\s+(?:not\s+|in)compatible\b"
                      r"|(?:cannot|can't|can not)\s+be\s+(?:used|enabled|combined)\s+(?:with|together|alongside)\b"
                      r"|(?:is|are)\s+not\s+supported\s+(?:with|together|alongside|in combination)\b)", re.IGNORECASE)


def _compared(text: str, found: re.Match[str]) -> str | None:
    """The direction a comparison gives the setting: as its left side, or (opposite) as its right side;
    "unset" for a setting said to clash with another feature."""
    after, before = text[found.end():found.end() + 60], text[max(0, found.start() - 60):found.start()]
    if _CLASHES.match(after):
        return "unset"
    if _EXCEEDS_LEFT.match(after):
        return "lower"
    if _EXCEEDS_RIGHT.search(before):
        return "raise"
    for side, match in ((1, _LEFT.match(after)), (-1, _RIGHT.search(before))):
        if match is None:
            continue
        big = (match.group("cmp").lower() in _BIG) != bool(match.group("neg"))
        wanted_big = big if (match.group("modal") or match.group("neg")) else not big
        return "raise" if wanted_big == (side == 1) else "lower"
    return None


_SWITCH = ("disable", "enable", "enforce", "use_")


def _switch_direction(key: str, direction: str) -> str:
    """An on/off switch is passed or dropped, never raised: "disable custom all-reduce with
    --disable-custom-all-reduce" and "try a larger batch with --enforce-eager" both pass the switch."""
    if not key.startswith(_SWITCH):
        return direction
    return "set" if direction != "unset" or key.startswith("disable") else direction


def _resolve(norm: str, engine: str | None) -> tuple[str, str] | None:
    """(engine, key) for a written flag: the recognised engine's own spelling, else another engine's key
    the recognised engine also has, else (engine unknown) the one engine whose spelling it is."""
    pairs = _spellings().get(norm, [])
    if engine is not None:
        mine = [p for p in pairs if p[0] == engine]
        if mine:
            return mine[0]
        keys = {k for _, k in pairs}
        eng = profiles.profile(engine)
        key = next((k for k in sorted(keys) if k in eng.flags), None)
        return (engine, key) if key else None
    engines = {e for e, _ in pairs}
    if len(engines) == 1:
        return pairs[0]
    # Several engines share the key; the one that also spells its flag this way wrote the message.
    own = [(e, k) for e, k in pairs if k in profiles.profile(e).keys_named(norm)]
    return own[0] if len({e for e, _ in own}) == 1 else None


def _short_option(written: str, engine: str | None) -> tuple[str, str] | None:
    """(engine, key) of a one-letter option the recognised engine documents ("-c" for llama.cpp's --ctx-size)."""
    if engine is None:
        return None
    keys = sorted(profiles.profile(engine).keys_named(written))
    return (engine, keys[0]) if keys else None


def _as_setting(found: re.Match[str], norm: str, text: str) -> bool:
    """A one-word name ("parallel", "dtype") is a setting only when written as one: with dashes, quoted
    or followed by a value; a name with an underscore or dash ("max_model_len") is one anyway."""
    quoted = found.start() > 0 and text[found.start() - 1] in "`'\""
    return "_" in norm or found.group(0).startswith("-") or found.group("value") is not None or quoted


_SWITCH_PREFIXES = ("enable_", "use_", "disable_")


@cache
def _features() -> list[tuple[re.Pattern[str], str, str, str]]:
    """(the feature a switch names, in words; engine; key; direction that switches the feature off) for every
    on/off switch of the profiles: "chunked prefill" for --enable-chunked-prefill (unset it), "custom
    all-reduce" for --disable-custom-all-reduce (set it)."""
    out = []
    for engine, eng in profiles.profiles().items():
        for key in eng.flags:
            prefix = next((p for p in _SWITCH_PREFIXES if key.startswith(p)), None)
            feature = key[len(prefix):] if prefix else ""
            if "_" not in feature:  # a one-word feature ("eager") is too common a word to read as the switch
                continue
            words = r"[-_ ]?".join(re.escape(w) for w in feature.split("_"))
            out.append((re.compile(rf"(?<![\w-]){words}(?![\w-])", re.IGNORECASE), engine, key,
                        "set" if prefix == "disable_" else "unset"))
    return out


def _clashing_features(text: str, engine: str | None) -> list[Named]:
    """Features written in words that the text says clash with another ("chunked prefill cannot be used with
    prefix caching"): the switch that turns the feature off, for the recognised engine (or the only one)."""
    found: dict[tuple[str | None, str], Named] = {}
    for pattern, owner, key, direction in _features():
        if engine is not None and owner != engine:
            continue
        for hit in pattern.finditer(text):
            if _CLASHES.match(text[hit.end():hit.end() + 60]):
                found.setdefault((None if engine is None else owner, key),
                                 Named(key, owner, hit.group(0), direction, None, hit.start()))
    owners = {n.engine for n in found.values()}
    return list(found.values()) if engine is not None or len(owners) == 1 else []


def named(text: str, engine: str | None) -> list[Named]:
    """The settings the text asks to change, in the order it names them, each once."""
    out: list[Named] = []
    seen: set[tuple[str | None, str]] = set()
    for found in _mention().finditer(text):
        # A comparison states what is wrong with this very setting, so it outranks a verb of the clause before
        # ("input disabled but max_tokens_per_mm_item (2496) is larger than max_num_batched_tokens").
        direction = _compared(text, found) or _direction(text, found.start())
        norm = profiles.flag_key(found.group("name")).lower().replace(" ", "_")
        resolved = _resolve(norm, engine)
        if direction is None or resolved is None or not _as_setting(found, norm, text):
            continue
        owner, key = resolved
        direction = _switch_direction(key, direction)
        if (None if engine is None else owner, key) in seen:
            continue
        seen.add((None if engine is None else owner, key))
        out.append(Named(key, owner, found.group(0), direction, found.group("value"), found.start()))
    for feature in _clashing_features(text, engine):
        if (None if engine is None else feature.engine, feature.key or "") not in seen:
            seen.add((None if engine is None else feature.engine, feature.key or ""))
            out.append(feature)
    for found in _REJECTED.finditer(text):
        written = (found.group("flag") or found.group("argflag") or found.group("renamed") or found.group("llflag")
                   or found.group("pyfield"))
        norm = profiles.flag_key(written).lower()
        # A one-letter option ("-c") is too short to look for in free text, but a parser that names it refused it.
        resolved = _resolve(norm, engine) or _short_option(written, engine)
        if resolved is None or (None if engine is None else resolved[0], resolved[1]) in seen:
            continue
        seen.add((None if engine is None else resolved[0], resolved[1]))
        own = written if written in profiles.profile(resolved[0]).spellings(resolved[1]) else None
        out.append(Named(resolved[1], resolved[0], written, "set", found.group("similar"), found.start(), own))
    for found in _ENV.finditer(text):
        direction = _direction(text, found.start())
        if direction is None:
            continue
        name = found.group(1)
        if (None, name) in seen or name.lower() in _spellings():  # an engine's own variable for a flag, read above
            continue
        seen.add((None, name))
        value = found.group(2)
        if direction == "unset" and _ENV_SWITCH.search(name):
            # "disable HF_HUB_ENABLE_HF_TRANSFER": an on/off variable is switched off by setting it to 0; removing it
            # from the environment leaves on what an image's own ENV turned on.
            direction, value = "set", value or "0"
        out.append(Named(None, engine, name, "set" if direction in (None, "raise", "lower") else direction,
                         value, found.start()))
    return sorted(out, key=lambda n: n.at)


def _spelt(engine: str, key: str, version: str | None) -> tuple[str, str | None] | None:
    eng = profiles.profile(engine)
    if version:
        spelt = eng.flag(key, version)
        if spelt is None:
            return None
        return spelt, next(s.since for s in eng.flags[key] if s.name == spelt)
    newest = max(eng.flags[key], key=lambda s: vkey(s.since) if s.since else ())
    return newest.name, newest.since


def actions(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """The named settings as diagnose actions, spelt for the recognised engine and release."""
    out: list[dict[str, Any]] = []
    for item in named(text, rec.engine):
        why = f"the message itself asks to {item.direction} {item.written}"
        if item.key is None:
            value = item.value or ("0" if item.direction == "unset" else None)
            flag = f"{item.written}={value}" if value else item.written
            out.append({"engine": item.engine, "flag": flag, "since": None, "direction": item.direction,
                        "value": value, "arithmetic": None, "why": why, "source": None})
            continue
        assert item.engine is not None
        version = rec.version if rec.engine == item.engine else None
        spelling = _spelt(item.engine, item.key, version)
        if spelling is None:
            continue
        eng = profiles.profile(item.engine)
        flag, since = item.spelt or eng.spelt_as(item.key, rec.options) or spelling[0], spelling[1]
        out.append({"engine": item.engine, "flag": flag, "since": since, "direction": item.direction,
                    "value": item.value, "arithmetic": None, "why": why, "source": eng.docs,
                    "aliases": eng.other_spellings(item.key, flag)})
    return out

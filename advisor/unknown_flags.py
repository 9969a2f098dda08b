"""A launcher that refuses a flag it does not know: the flag came in a later release (upgrade the engine), or
the command writes it in a spelling the engine does not accept (write it as the engine documents it).

Runs on every diagnose request, after the failure catalog. The argument parsers print the refused flag:
argparse (vLLM, SGLang, TensorRT-LLM scripts) "error: unrecognized arguments: --lora-modules ...", llama.cpp's
common/arg.cpp "error: invalid argument: -hf" (older builds "error: unknown argument: --ctx_size"), clap (TGI's
launcher) "unexpected argument '--x' found", and Python for an engine's argument class built with a keyword an older
release lacks ("got an unexpected keyword argument 'limit_mm_per_prompt'", read as `--limit-mm-per-prompt`). A value
argparse refuses for a flag it knows ("invalid choice: 'llama3_json'") gets the same conditional upgrade: choices
grow with releases. A refused flag the engine profile documents
(advisor/catalog/engines/*.json, with its aliases) means the installed release predates it: the answer is an
upgrade, to the release the profile says introduced the spelling when it knows one. A flag on the pasted command
line that only differs from a documented one by '_' for '-' is the other cause (llama.cpp's `main` of March 2024
refused `--ctx_size`, ggml-org/llama.cpp#6191; current common/arg.cpp rewrites '_' to '-' in a `--` flag again):
the answer is the documented spelling. So is a refused flag that only differs from a documented one by its
dashes (`--ngl` for `-ngl`, ggml-org/llama.cpp#23739) or by a typographic dash pasted from a web page
(`–max-input-tokens`). A refused flag whose setting an older release spelt differently (TGI's `--max-input-tokens`,
since 2.0.0, was `--max-input-length` up to 1.4.5) also gets that older spelling, which the installed release
accepts, before the upgrade. A refused flag the profile does not list but another engine's profile documents
(vLLM's `--enable-reasoning` given to SGLang) belongs to that engine: drop it. Any other flag the profile does not
list gets an upgrade worded as a condition (if the engine's current documentation lists the flag) and naming no
release: guessing which release added it would be invention. A flag no profile knows, on an unrecognised engine,
gets nothing.
"""
from __future__ import annotations

import re
from typing import Any

from advisor import profiles
from advisor.error_text import Recognised
from advisor.profiles import EngineProfile
from advisor.remedies import release_move
from advisor.versions import at_least

# The parser's complaint and what follows it on the same line; a flag there starts with '-', which keeps a CUDA
# "invalid argument" (followed by words, not a flag) out.
_REFUSED = re.compile(r"(?:unrecognized arguments?|unknown argument|invalid argument|unexpected argument)\s*:?\s*"
                      r"['\"]?(?P<rest>-{1,2}[A-Za-z][^\n]*)", re.IGNORECASE)
_FLAG = re.compile(r"(?<![\w-])(-{1,2}[A-Za-z][\w-]*)")
# Python refusing a keyword argument: an engine's argument class (vLLM's EngineArgs/AsyncEngineArgs, whose fields
# are its flags in snake case) built by a wrapper or script for a newer release ("TypeError: __init__() got an
# unexpected keyword argument 'limit_mm_per_prompt'"); read as the flag `--limit-mm-per-prompt`.
# argparse refusing a value of a flag it knows: "argument --tool-call-parser: invalid choice: 'llama3_json' (choose
# from 'mistral', 'hermes')".
_CHOICE = re.compile(r"argument (?P<flag>-{1,2}[\w-]+)(?:/-{1,2}[\w-]+)?: invalid choice: '(?P<value>[^'\n]+)'")
_KWARG = re.compile(r"got an unexpected keyword argument '(?P<name>[A-Za-z]\w*)'")
# Typographic dashes and quotes that a command copied from a web page or chat carries ("–max-input-tokens").
_TYPOGRAPHIC = str.maketrans({"\u2013": "--", "\u2014": "--", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _refused(text: str) -> list[str]:
    """The flags the parser says it refused, in order, each once (argparse lists every one; values are skipped)."""
    found: list[str] = []
    for hit in _REFUSED.finditer(text):
        rest = hit.group("rest")
        # argparse lists all refused arguments with their values; the others name one flag and then explain.
        if "unrecognized" in hit.group(0).lower():
            flags = [t.strip("'\",") for t in rest.split() if t.startswith("-")]
        else:
            first = _FLAG.match(rest)
            flags = [first.group(1)] if first else []
        found += [f for f in flags if _FLAG.fullmatch(f) and f not in found]
    for hit in _KWARG.finditer(text):
        flag = "--" + hit.group("name").replace("_", "-")
        if flag not in found:
            found.append(flag)
    return found


def _owner(written: str, engine: str | None) -> tuple[EngineProfile, str] | None:
    """(engine profile, flag key) the written flag names: in the recognised engine, else in the only engine that
    documents it."""
    if engine is not None:
        eng = profiles.profile(engine)
        keys = sorted(eng.keys_named(written))
        return (eng, keys[0]) if keys else None
    owners = [(eng, sorted(eng.keys_named(written))) for eng in profiles.profiles().values()]
    owners = [(eng, keys) for eng, keys in owners if keys]
    return (owners[0][0], owners[0][1][0]) if len(owners) == 1 else None


def _since(eng: EngineProfile, key: str, written: str) -> str | None:
    """The first release the profile says spells the flag this way, when it knows one."""
    spelling = next((s for s in eng.flags.get(key, []) if s.name == written), None)
    return spelling.since if spelling is not None else None


def _upgrade(eng: EngineProfile, key: str, written: str, rec: Recognised) -> dict[str, Any]:
    since = _since(eng, key, written)
    when = f"from {eng.name} {since}" if since else "in newer releases than the one that refused it"
    return release_move(
        eng.id, "upgrade", since,
        f"The installed {eng.name} does not know {written}, which {eng.name} documents {when}: upgrade to a release that "
        "has it (or drop the flag).",
        next((s.source for s in eng.flags.get(key, []) if s.source), None) or eng.docs, since=since,
        arithmetic=f"from {rec.version} to {since} or later" if since and rec.version and rec.engine == eng.id else None)


def _older_spellings(eng: EngineProfile, key: str, written: str) -> list[dict[str, Any]]:
    """The spellings of the same setting that releases before `written` existed accept (set actions)."""
    since = _since(eng, key, written)
    if since is None:
        return []
    return [{"engine": eng.id, "flag": s.name, "since": None, "direction": "set", "value": None,
             "arithmetic": None,
             "why": f"{eng.name} releases before {since} spell this setting {s.name} (up to {s.until}): on the "
                    f"installed release, write it that way instead of {written}.",
             "source": s.source or eng.docs}
            for s in eng.flags.get(key, []) if s.name.startswith("-") and s.until and not at_least(s.until, since)]


def _foreign(eng: EngineProfile, written: str) -> dict[str, Any] | None:
    """A drop action when `written` is not `eng`'s flag but another engine's profile documents it."""
    others = [other for other in profiles.profiles().values() if other.id != eng.id and other.keys_named(written)]
    if not others:
        return None
    names = " and ".join(other.name for other in others)
    return {"engine": eng.id, "flag": written, "since": None, "direction": "unset", "value": None, "arithmetic": None,
            "why": f"{written} is a {names} flag that {eng.name} does not document: drop it (and look up {eng.name}'s "
                   "own flag for the same setting).",
            "source": eng.docs}


def _unlisted(eng: EngineProfile, written: str) -> dict[str, Any]:
    """A refused flag the profile does not list, on a recognised engine: an upgrade worded as the conditional it is."""
    return release_move(
        eng.id, "upgrade", None,
        f"The installed {eng.name} does not know {written}. If {eng.name}'s current documentation lists it, the "
        "installed release predates it: upgrade (InfraWiki does not know which release added it). If it does not, the "
        "flag is misspelt or belongs to another entry point: fix or drop it.", eng.docs)


def _newer_choice(eng: EngineProfile, flag: str, value: str) -> dict[str, Any]:
    """A value the parser refused for a flag it knows: choices grow with releases (parsers, backends, dtypes), so
    a value the engine documents today and the installed release lacks means an upgrade, worded as the condition."""
    return release_move(
        eng.id, "upgrade", None,
        f"The installed {eng.name} does not offer {value!r} for {flag}. If {eng.name}'s current documentation lists "
        "that choice, the installed release predates it: upgrade (InfraWiki does not know which release added it). If "
        "it does not, pick one of the choices the message lists.", eng.docs)


def _respelt(eng: EngineProfile, key: str, written: str, value: str | None) -> dict[str, Any]:
    flag = eng.flag(key) or eng.spellings(key)[0]
    return {"engine": eng.id, "flag": flag, "since": None, "direction": "set", "value": value, "arithmetic": None,
            "why": f"{written} is not a spelling {eng.name} accepts; it documents the setting as "
                   f"{' / '.join(n for n in eng.spellings(key) if n.startswith('-'))}.",
            "source": next((s.source for s in eng.flags.get(key, []) if s.source), None) or eng.docs,
            "aliases": eng.other_spellings(key, flag)}


def actions(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """Upgrades for refused flags the engine documents, and documented spellings for the command's misspelt flags;
    empty when no parser refused a flag."""
    text = text.translate(_TYPOGRAPHIC)
    refused = _refused(text)
    choice = _CHOICE.search(text)
    out: list[dict[str, Any]] = []
    chooser = _owner(choice.group("flag"), rec.engine) if choice is not None else None
    if choice is not None and chooser is not None:
        out.append(_newer_choice(chooser[0], choice.group("flag"), choice.group("value")))
    if not refused:
        return out
    for written in refused:
        owned = _owner(written, rec.engine)
        if owned is not None and written in owned[0].spellings(owned[1]):
            out += _older_spellings(owned[0], owned[1], written)
            out.append(_upgrade(owned[0], owned[1], written, rec))
        elif owned is not None and "_" not in written:  # dashes only (with '_', the loop below reads its value)
            out.append(_respelt(owned[0], owned[1], written, None))
        elif owned is None and rec.engine is not None:
            foreign = _foreign(profiles.profile(rec.engine), written)
            if foreign is not None:
                out.append(foreign)
            elif "_" not in written:
                out.append(_unlisted(profiles.profile(rec.engine), written))
    # A misspelt flag appears in the complaint and on the command line; the command's occurrence carries the value.
    misspelt: dict[tuple[str, str], tuple[EngineProfile, str, str | None]] = {}
    for hit in re.finditer(r"(?<![\w-])(-{1,2}[A-Za-z][\w-]*_[\w-]*)(?:[ =](?P<value>[^\s-][^\s]*))?", text):
        written = hit.group(1)
        owned = _owner(written, rec.engine)
        if owned is None or written in owned[0].spellings(owned[1]):
            continue
        known = misspelt.get((owned[0].id, owned[1]))
        if known is None or known[2] is None:
            misspelt[(owned[0].id, owned[1])] = (owned[0], written, hit.group("value"))
    out += [_respelt(eng, key, written, value) for (_, key), (eng, written, value) in misspelt.items()]
    return out

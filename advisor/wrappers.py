"""Engine settings spelt the way a wrapper sets them: an ollama user cannot pass `--ctx-size` to the llama-server
ollama starts, only OLLAMA_CONTEXT_LENGTH.

Runs on every diagnose answer, last. A wrapper (`wrappers` in an engine profile: ollama, koboldcpp and LM Studio for
llama.cpp) starts the engine with flags taken from its own settings, so when the text is the wrapper's (its `requires`
pattern, or its report that the engine died), each action on a flag the wrapper sets gets twins spelt as the
wrapper's variable and its per-model option (ollama's `num_gpu` for `-ngl`) or its own flag (koboldcpp's
`--gpulayers`), right after it, with the value in the wrapper's spelling (`-fa off` is OLLAMA_FLASH_ATTENTION=0). The
engine's own spelling stays: the same error may come from a plain engine run, and the wrapper passes some flags
through. An upgrade or downgrade in a wrapper's text names the wrapper as the package to move (`target`): it ships
its own build of the engine (or its engine runtime, for a wrapper that updates that apart: LM Studio).
"""
from __future__ import annotations

from functools import cache
from typing import Any

from advisor.profiles import EngineProfile, Wrapper, profiles


def _twins(action: dict[str, Any], eng: EngineProfile, wrapper: Wrapper, key: str) -> list[dict[str, Any]]:
    """The action spelt as the wrapper's variable, its per-model option and its own flag, whichever it has."""
    setting = wrapper.settings[key]
    value = action.get("value")
    value = setting.values.get(str(value), value) if value is not None else None
    common = {**action, "since": None, "value": value, "aliases": [], "applies_to": wrapper.name}
    twins = []
    if setting.env is not None:
        twins.append({**common, "flag": f"{setting.env}={value}" if value is not None else setting.env,
                      "why": f"{wrapper.name} starts {eng.name} with {action['flag']} from its own variable "
                             f"{setting.env}: set it there. {action['why']}", "source": wrapper.source})
    if setting.option is not None:
        twins.append({**common, "flag": setting.option,
                      "why": f"{wrapper.name} starts {eng.name} with {action['flag']} from the model's option "
                             f"{setting.option} (a Modelfile PARAMETER, or the request's options): set it there. "
                             f"{action['why']}", "source": setting.source or wrapper.source})
    if setting.flag is not None:
        twins.append({**common, "flag": setting.flag,
                      "why": f"{wrapper.name} starts {eng.name} with {action['flag']} from its own flag {setting.flag}: "
                             f"pass it there. {action['why']}", "source": setting.source or wrapper.source})
    return twins


def running(engine: str | None, text: str) -> Wrapper | None:
    """The wrapper whose text this is (its names, or its report that the engine died) among those of the engine, or
    None."""
    eng = profiles().get(engine or "")
    return next((w for w in eng.wrappers if w.shows(text)), None) if eng else None


def respell(findings: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The findings with each action on a flag a wrapper of the text sets followed by the wrapper's spelling."""
    wrapper_of = cache(lambda engine: running(engine, text))  # read once per engine, not once per action
    out = []
    for finding in findings:
        actions: list[dict[str, Any]] = []
        for action in finding["actions"]:
            actions.append(action)
            eng = profiles().get(action.get("engine") or "")
            if eng is not None and action.get("direction") in ("upgrade", "downgrade") and "target" not in action:
                # the wrapper bundles its own build of the engine: the release to move is the wrapper's
                wrapper = wrapper_of(eng.id)
                if wrapper is not None:
                    package = wrapper.runtime or wrapper.name
                    # the reason speaks of the wrapper's releases too ("try a newer ollama release")
                    why = action["why"].replace(f"{eng.name} release", f"{package} release")
                    ships = (f"{wrapper.name} ships its own build of {eng.name}, so its release is the one to move"
                             if wrapper.runtime is None else
                             f"{package} is updated apart from {wrapper.name} itself, so that is the release to move")
                    actions[-1] = {**action, "target": package, "why": f"{ships}. {why}"}
                continue
            # fixes only: a technique finding lists the flags that switch it on, with no reason of their own
            if eng is None or "why" not in action or not action["flag"].startswith("-"):
                continue
            wrapper = wrapper_of(eng.id)
            if wrapper is None:
                continue
            for key in sorted(eng.keys_named(action["flag"]) & set(wrapper.settings)):
                for twin in _twins(action, eng, wrapper, key):
                    if all(a["flag"] != twin["flag"] for a in finding["actions"] + actions):
                        actions.append(twin)
        out.append({**finding, "actions": actions})
    return out

"""An installed release outside the range a package requires: move that package into the range.

Runs on every diagnose request. Python packages check their dependencies at import and say so in one of a few
fixed sentences, which name the package, the range and the release found, so the fix can be read off the
message whatever the error around it:

- `require_version` in transformers (and copies of it in serving stacks built on it): "vllm>=0.4.3,<=0.6.2 is
  required for a normal functioning of this module, but found vllm==0.6.3." (REQUIRE_VERSION_SOURCE);
- SGLang's `assert_pkg_version`: "flashinfer with minimum required version 0.1.6 is not installed." and "… is
  installed with version 0.1.5, which is less than the minimum required version 0.1.6." (ASSERT_PKG_SOURCE).

A release below the minimum is upgraded to it. One above the maximum is moved back into the range, or the package
that states the range is upgraded: a newer release of it usually admits the newer dependency. Both are offered, the
range first, since it is what the message states.
"""
from __future__ import annotations

import re
from typing import Any

from advisor.error_text import Recognised
from advisor.remedies import release_move
from advisor.versions import vkey

REQUIRE_VERSION_SOURCE = ("https://github.com/huggingface/transformers/blob/d9547809bb9fc45c7e30914827081214956981c5/"
                          "src/transformers/utils/versions.py")
ASSERT_PKG_SOURCE = ("https://github.com/sgl-project/sglang/blob/4ebfeba20145f80822040effc47d084dd3c0c56e/"
                     "python/sglang/srt/utils.py")
_NAME = r"[A-Za-z][\w.-]*"
_REL = r"\d[\w.+-]*?"
_REQUIRED = re.compile(rf"(?P<pkg>{_NAME})(?P<spec>(?:\s*[<>=!]=?\s*{_REL}\s*,?)+) is required for a normal functioning of "
                       rf"this module, but found (?P=pkg)==(?P<found>{_REL})\.?(?:\s|$)")
_MINIMUM = re.compile(rf"(?P<pkg>{_NAME}) (?:is installed with version (?P<found>{_REL}), which is less than the minimum "
                      rf"required version|with minimum required version) (?P<min>{_REL})(?:\.?\s| is not installed|$)")
_BOUND = re.compile(rf"(?P<op>[<>]=?|==)\s*(?P<rel>{_REL})\s*(?:,|$)")


def _bounds(spec: str) -> tuple[str | None, str | None]:
    """The lowest and highest release a pip-style range admits (None where it is open)."""
    low = high = None
    for bound in _BOUND.finditer(spec.replace(" ", "")):
        if bound["op"] in (">", ">=", "=="):
            low = bound["rel"]
        if bound["op"] in ("<", "<=", "=="):
            high = bound["rel"]
    return low, high


def actions(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """The moves that bring the named package into the range the message states; [] when it states none."""
    found = _MINIMUM.search(text)
    if found:
        pkg, minimum = found["pkg"], found["min"]
        # the sentence is SGLang's own check, so with no engine recognised it is SGLang's dependency
        return [release_move(rec.engine or "sglang", "upgrade", minimum,
                             f"The message requires {pkg} {minimum} or later and finds "
                             f"{found['found'] or 'none installed'}: install {pkg}>={minimum} (or the serving release "
                             "that pins it).", ASSERT_PKG_SOURCE, target=pkg)]
    found = _REQUIRED.search(text)
    if not found:
        return []
    pkg, have, spec = found["pkg"], found["found"], found["spec"].strip()
    low, high = _bounds(spec)
    if low is not None and vkey(have) < vkey(low):
        return [release_move(rec.engine, "upgrade", low, f"The message requires {pkg}{spec} and finds {have}: install "
                             f"{pkg}>={low}.", REQUIRE_VERSION_SOURCE, target=pkg)]
    if high is not None and vkey(have) > vkey(high):
        return [release_move(rec.engine, "downgrade", high, f"The message requires {pkg}{spec} and finds {have}: "
                             f"install {pkg} {high}, the newest release the range admits.", REQUIRE_VERSION_SOURCE,
                             target=pkg),
                release_move(rec.engine, "upgrade", None, "Or upgrade the package that states this range: a newer "
                             f"release of it usually admits {pkg} {have}.", REQUIRE_VERSION_SOURCE,
                             target=f"the package that requires {pkg}")]
    return []

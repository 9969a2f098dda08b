"""A failure the text says began with an update: pin the release that worked while the regression is reported.

Runs on every diagnose request. When someone writes that it broke "after updating to v1.103", names a "broken
version" and a "last known good version", or says the previous release works, the quickest fix that keeps them
serving is the release that worked, and the releases on either side of the update are how a regression is found:
llama.cpp's bug form asks "If the bug was not present on an earlier version: when did it start appearing?" (its
"First Bad Commit" field, SOURCE below). No catalogued string is needed: the words say it, whatever the error.
The release that worked is named when the text names it; otherwise the answer asks for the one before the update.
An upgrade past the release that broke it follows, since a regression's fix ships as a later patch release.

Only what the person says counts: a text that does not speak of an update that broke it gets no downgrade, since
pinning an old release forgoes fixes and is no answer to an error that was always there.
"""
from __future__ import annotations

import re
from typing import Any

from advisor.error_text import Recognised
from advisor.profiles import profile, profiles
from advisor.remedies import release_move

SOURCE = ("https://github.com/ggml-org/llama.cpp/blob/74d087935d27e402716ddf6c6e24b71f4ff2e032/"
          ".github/ISSUE_TEMPLATE/011-bug-results.yml")
# What people write when a release broke what the one before ran. Each alternative needs both the change and its
# direction ("after updating", "broken version", "previous version works"); "update" alone is no regression.
_VERSION = r"v?\d+(?:\.\d+)*(?:[-.]?(?:post|rc|b|dev)\d*)?(?![\w.])"
_CUE = re.compile(
    r"\bregress(?:ion|ed)\b|\bfirst bad (?:commit|version|release|build)\b"
    r"|\b(?:after|since) (?:the |an? |my |this |last |latest |recent |today'?s )*(?:update|upgrade|updating|upgrading)\b"
    r"|\b(?:broken|bad|failing) (?:version|release|build|runtime|commit)\b"
    r"|\blast (?:known[- ])?(?:good|working) (?:version|release|build|commit|runtime)\b"
    r"|\b(?:previous|older|earlier|prior|last) (?:version|release|build|runtime)s? (?:work(?:s|ed)?|(?:is|was) (?:fine|ok|good))\b"
    r"|\b(?:worked|works|working|ran|runs) (?:fine |well |ok |perfectly )?(?:in|with|on|before|until) (?:the )?"
    r"(?:previous|older|earlier|prior|last) (?:version|release|build)",
    re.IGNORECASE)
# The release the text says worked: "last known good version: 9246", "worked with v0.1.29", "v1.102 works".
_GOOD = (
    re.compile(rf"last (?:known[- ])?(?:good|working) (?:version|release|build|commit|runtime)\s*[:=]?\s*(?:b|version )?({_VERSION})",
               re.IGNORECASE),
    # a bare number after "works with" is no release ("works with 2 GPUs"): it needs a dot or the word before it
    re.compile(r"\b(?:worked|works|working|ran|runs) (?:fine |well |ok |perfectly )?(?:in|with|on) "
               rf"(?:(?:version |release |build |b)({_VERSION})|(v?\d+\.\d+(?:\.\d+)*(?:\.?post\d+|rc\d+)?)(?![\w.]))",
               re.IGNORECASE),
    re.compile(rf"(?:version|release|build|runtime) ({_VERSION}) (?:works|worked|is fine|was fine|runs fine)", re.IGNORECASE),
)


def regressed(text: str) -> bool:
    """True when the text says the failure began with an update, or names a release that worked."""
    return bool(_CUE.search(text)) or last_good(text) is not None


def last_good(text: str) -> str | None:
    """The release the text says worked, as written ("9246", "v1.102"); None when it names none."""
    for pattern in _GOOD:
        found = pattern.search(text)
        if found:
            return next(g for g in found.groups() if g)
    return None


def actions(text: str, rec: Recognised) -> list[dict[str, Any]]:
    """The downgrade to the release that worked, then an upgrade past the one that broke it, for the recognised
    engine (else without one); [] when the text says nothing of an update that broke it."""
    good = last_good(text)
    if good is None and not _CUE.search(text):  # regressed(), without reading the release twice
        return []
    name = profile(rec.engine).name if rec.engine in profiles() else "the engine"
    target = f"release {good} (the text says it worked)" if good else "the release you ran before the update"
    why = (f"The text says this began with an update: to keep serving, pin {name} to {target}, and report the "
           "regression with both releases named, which is how an engine's maintainers find the change that broke it.")
    later = ("Or look for a patch release after the one that broke it: maintainers ship a regression's fix as the "
             "next patch (InfraWiki has no release note naming this one, so no release is named).")
    return [release_move(rec.engine, "downgrade", good, why, SOURCE),
            release_move(rec.engine, "upgrade", None, later, SOURCE)]

"""The development cases in ../shared/eval (real issue threads) pass, evaluated as the scorer does.

The scorer's checks are Python expressions over the response; they are evaluated here with the
helpers in globals so generator expressions can see them.
"""
from __future__ import annotations

import json

from advisor.services import recommend
from advisor.validation import AdvisorInputError

INT4 = ("awq", "gptq", "int4", "w4a16", "q4", "marlin", "bnb-4bit", "nf4")


def _low(x):
    return json.dumps(x).lower() if not isinstance(x, str) else x.lower()


def _is_quant(r, fams):
    q = (r.get("quantization") or "").lower()
    return any(f in q for f in fams)


def test_every_development_case_passes(shared_dir):
    cases = json.loads((shared_dir / "eval" / "advisor_cases_dev.json").read_text())
    failures = []
    for case in cases:
        try:
            out = recommend(case["request"])
        except AdvisorInputError as exc:
            out = exc.as_dict()
        recs = out.get("recommendations") or []
        top = recs[0] if recs else {}
        env = {"out": out, "recs": recs, "top": top, "flags": top.get("flags") or {}, "low": _low,
               "is_quant": _is_quant, "INT4": INT4}
        failures += [(case["id"], check) for check in case["checks"] if not eval(check, dict(env))]  # noqa: S307
    assert failures == []

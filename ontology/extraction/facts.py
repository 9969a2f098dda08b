"""The fact dict every extractor emits (the FACTS_FORMAT.md fields), built in one place."""
from __future__ import annotations


def new_fact(kind: str, subject: str, parameter: str, *, page: int, quote: str, confidence: float, extractor: str,
             value: str | None = None, unit: str | None = None, effect: str | None = None,
             condition: str | None = None) -> dict:
    """One extracted fact, before validation and grounding."""
    return {"kind": kind, "subject": subject, "parameter": parameter, "value": value, "unit": unit,
            "condition": condition, "effect": effect, "page": page, "quote": quote,
            "confidence": confidence, "extractor": extractor}

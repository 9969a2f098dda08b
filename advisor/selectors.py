"""Reads of the advisor for the other apps and the pages (services.py answers a request; this reads).

Catalog and engine-profile lookups, whether a paper applies to a person's setup, the request's JSON
schema, diagnosing a symptom, and a person's saved setup.
"""
from __future__ import annotations

from typing import Any

from advisor.applicability import applicability
from advisor.catalog import gpus
from advisor.diagnose import MAX_QUERY_CHARS, DiagnoseInputError, diagnose
from advisor.local_models import MAX_CONFIG_BYTES
from advisor.models import SavedSetup
from advisor.profiles import engine_label, engine_names, profile, technique_flags
from advisor.request import openapi_schema

__all__ = [
    "MAX_CONFIG_BYTES", "MAX_QUERY_CHARS", "DiagnoseInputError", "applicability", "diagnose", "engine_label",
    "engine_names", "gpus", "openapi_schema", "profile", "saved_setup", "technique_flags",
]


def saved_setup(user: Any) -> dict[str, Any] | None:
    """The setup a signed-in person saved with their account, or None."""
    kept = SavedSetup.objects.filter(user=user).values_list("setup", flat=True).first()
    return kept if isinstance(kept, dict) else None

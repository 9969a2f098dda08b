"""OpenAPI post-processing (drf-spectacular hook, runs whenever /api/schema/ is generated): every
operation documents the API's error document for the statuses it can answer, so clients and
schema-driven tests know the shape of failures as well as of successes."""
from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every API failure: a short stable phrase, the specifics, and what to do next.",
    "properties": {
        "error": {"type": "string", "example": "invalid input"},
        "detail": {"description": "a message, or field name -> list of messages for invalid input"},
        "hint": {"type": "string", "example": "Fix the fields listed in detail and send the request again."},
    },
    "required": ["error"],
}
_ALWAYS = {"400": "invalid input or malformed request", "401": "authentication failed",
           "403": "permission denied", "404": "not found", "405": "method not allowed",
           "406": "not acceptable", "415": "unsupported media type", "429": "too many requests",
           "500": "server error (a bug; it has been logged)"}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Add the Error component and reference it from each operation for each error status."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            for status, description in _ALWAYS.items():
                responses.setdefault(status, {"description": description, "content": ref})
    return result

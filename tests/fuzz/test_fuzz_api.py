"""Every API operation in the OpenAPI schema, with hostile path values, query parameters and bodies
beyond the schema (tests/api/test_schema_fuzz.py covers bodies that follow it): huge, deep, NaN,
NUL, wrong types, wrong encodings, and one of the operation's fields in multipart, form and odd
content types (`*/*`, text/plain, none, a Latin-1 form, lone surrogates). Property: a 2xx/3xx/4xx
answer, never a 5xx, and every 4xx is the API's error document {"error", "detail", "hint"} in JSON.
"""
from __future__ import annotations

import json
import re
from urllib.parse import quote, urlencode

import pytest
from rest_framework.test import APIClient

from tests.frontend.conftest import web  # noqa: F401  (fixture)
from tests.frontend.data import token_client
from tests.fuzz.conftest import time_limit, tried
from tests.fuzz.inputs import encoded_bodies, field_bodies, hostile_json_bodies, rng, values

pytestmark = pytest.mark.django_db
PATH_VALUES = 8
QUERY_CASES = 6
FIELD_BODIES = 12
ERROR_KEYS = {"error", "detail", "hint"}


def _operations(schema: dict) -> list[tuple[str, str, dict]]:
    return [(path, method.upper(), op) for path, item in schema["paths"].items()
            for method, op in item.items() if method in {"get", "post", "put", "patch", "delete"}]


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _body_properties(schema: dict, op: dict) -> dict:
    content = op.get("requestBody", {}).get("content", {})
    body = content.get("application/json", {}).get("schema")
    return _resolve(schema, body).get("properties", {}) if body else {}


def _error_shape_problem(response) -> str | None:
    """Why a 4xx answer is not the API's error document, or None when it is."""
    if not response["Content-Type"].startswith("application/json"):
        return f"not JSON ({response['Content-Type']})"
    try:
        document = json.loads(response.content)
    except ValueError:
        return "unparsable JSON"
    if not (isinstance(document, dict) and isinstance(document.get("error"), str) and set(document) <= ERROR_KEYS):
        return f"not the error shape: {response.content[:120]!r}"
    return None


def _fill(path: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", quote(value.encode("utf-8", "surrogatepass"), safe="") or "x", path)


def test_no_api_operation_answers_a_server_error_to_hostile_input(web):  # noqa: F811
    anonymous, editor = APIClient(), token_client(web.users["editor"])
    schema = json.loads(anonymous.get("/api/schema/?format=json").content)
    failures: list[str] = []

    def call(client, method: str, template: str, url: str, body: bytes | None = None,
             content_type: str = "application/json"):
        with time_limit(f"{method} {url[:80]}"):
            response = client.generic(method, url, body or b"", content_type=content_type)
        tried(f"api {method} {template}")
        case = f"{method} {url[:120]} {content_type[:50]!r} body={(body or b'')[:80]!r}"
        if response.status_code >= 500:
            failures.append(f"{case} -> {response.status_code}")
        elif response.status_code >= 400 and (problem := _error_shape_problem(response)):
            failures.append(f"{case} -> {response.status_code}, {problem}")

    for path, method, op in _operations(schema):
        r = rng(f"api:{method}:{path}")
        urls = [_fill(path, str(v)) for v in values(r, PATH_VALUES)] if "{" in path else [path]
        for url in urls:
            call(anonymous if method == "GET" else editor, method, path, url)
        query_names = [p["name"] for p in op.get("parameters", []) if p.get("in") == "query"]
        if query_names:
            pool = values(r, 40)
            for _ in range(QUERY_CASES):
                params = {name: str(r.choice(pool)) for name in r.sample(query_names, r.randint(1, len(query_names)))}
                call(anonymous, method, path, _fill(path, "2309.06180") + "?" + urlencode(params, encoding="utf-8", errors="surrogatepass"))
        if method in {"POST", "PUT", "PATCH"}:
            target = _fill(path, "2309.06180")
            for _, body, content_type in hostile_json_bodies():
                call(editor, method, path, target, body, content_type)
            for body in field_bodies(r, _body_properties(schema, op), FIELD_BODIES):
                call(editor, method, path, target, json.dumps(body).encode())
            for field in list(_body_properties(schema, op))[:2] or ["value"]:
                for _, body, content_type in encoded_bodies(field):
                    call(anonymous, method, path, target, body, content_type)
                    call(editor, method, path, target, body, content_type)
    assert not failures, f"{len(failures)} server errors or answers not in the error shape:\n" + "\n".join(failures[:40])

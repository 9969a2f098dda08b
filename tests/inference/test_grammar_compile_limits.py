"""Guided requests on a shared server: a slow grammar compiles without stalling the others, and grammars of a
size or shape known to compile for minutes are refused at once with a 400 that says why."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from inference.request_limits import MAX_OPTIONAL_PROPERTIES, MAX_PATTERN_REPEAT, ServerLimits
from tests.inference.conftest import serving

SMALL = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.fixture(scope="module")
def server(tiny_chat_model):
    with serving(tiny_chat_model, num_kvcache_blocks=128, max_model_len=512,
                 limits=ServerLimits(max_schema_bytes=32 * 1024)) as (srv, base):
        yield srv, base


def guided(base: str, schema: dict, timeout: float = 60) -> requests.Response:
    return requests.post(f"{base}/v1/completions", timeout=timeout, json={
        "prompt": "answer:", "max_tokens": 20, "temperature": 0,
        "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}})


def optional_properties(n: int, prefix: str = "p") -> dict:
    return {"type": "object", "properties": {f"{prefix}{i}": {"type": "string"} for i in range(n)}}


def test_guided_requests_complete_while_another_schema_compiles_slowly(server):
    srv, base = server
    assert guided(base, SMALL).status_code == 200  # compiled and cached
    slow = optional_properties(450)  # seconds to compile (over the HTTP cap, so compiled through the engine)
    compiling = threading.Thread(target=srv.loop.engine.guided.compile, args=(slow,))
    compiling.start()
    time.sleep(0.3)
    try:
        start = time.monotonic()
        cached = guided(base, SMALL)
        fresh = guided(base, {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        took = time.monotonic() - start
        still_compiling = compiling.is_alive()
    finally:
        compiling.join()
    assert cached.status_code == 200 and fresh.status_code == 200
    assert still_compiling, f"the guided requests took {took:.1f} s: they waited for the slow compile"


@pytest.mark.parametrize("schema,words", [
    ({"enum": [f"value-{i:06d}-" + "x" * 40 for i in range(20000)]}, "bytes"),
    (optional_properties(MAX_OPTIONAL_PROPERTIES + 200), "optional properties"),
    ({"type": "string", "pattern": f"(a|b|c|d){{1,{MAX_PATTERN_REPEAT * 8}}}"}, "repeats"),
])
def test_a_grammar_known_to_compile_for_minutes_is_refused_at_once(server, schema, words):
    _, base = server
    start = time.monotonic()
    r = guided(base, schema, timeout=30)
    assert r.status_code == 400 and time.monotonic() - start < 5
    error = r.json()["error"]
    assert error["param"] == "response_format" and words in error["message"]


def test_tools_whose_schemas_are_too_large_are_refused_as_tools(server):
    _, base = server
    tools = [{"type": "function", "function": {"name": f"f{i}", "parameters": optional_properties(60, f"a{i}_")}}
             for i in range(20)]
    r = requests.post(f"{base}/v1/chat/completions", timeout=30, json={
        "messages": [{"role": "user", "content": "call one"}], "tools": tools, "max_tokens": 5})
    assert r.status_code == 400 and r.json()["error"]["param"] == "tools"
    assert "bytes" in r.json()["error"]["message"]

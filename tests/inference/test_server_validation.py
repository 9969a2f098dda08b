"""Strict request validation over real HTTP: every malformed field is a 400 in OpenAI's error shape that names
it, never a 500, an empty reply or a request quietly run with a value the sampler cannot use."""

from __future__ import annotations

import json

import pytest
import requests

from tests.inference.conftest import serving

CHAT = "/v1/chat/completions"
DONE = "/v1/completions"
USER = '"messages": [{"role": "user", "content": "hi"}]'
TOOLS = '"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]'


@pytest.fixture(scope="module")
def server(tiny_chat_model):
    with serving(tiny_chat_model, num_kvcache_blocks=64, max_model_len=256) as (srv, base):
        yield srv, base


def post_raw(base: str, path: str, body: str) -> requests.Response:
    return requests.post(f"{base}{path}", data=body.encode(), headers={"Content-Type": "application/json"}, timeout=60)


@pytest.mark.parametrize("path,body,param", [
    (DONE, '{"prompt": "x", "temperature": NaN}', None),
    (DONE, '{"prompt": "x", "top_p": Infinity}', None),
    (DONE, '{"prompt": "x", "temperature": 1e400}', "temperature"),
    (DONE, '{"prompt": "x", "temperature": 1e-30}', "temperature"),
    (DONE, '{"prompt": "x", "top_p": -1e400}', "top_p"),
    (DONE, '{"prompt": "x", "max_tokens": "5"}', "max_tokens"),
    (DONE, '{"prompt": "x", "max_tokens": 2.5}', "max_tokens"),
    (DONE, '{"prompt": "x", "max_tokens": true}', "max_tokens"),
    (DONE, '{"prompt": "x", "seed": 18446744073709551616}', "seed"),
    (DONE, '{"prompt": "x", "seed": -9223372036854775809}', "seed"),
    (DONE, '{"prompt": "x", "seed": "7"}', "seed"),
    (DONE, '{"prompt": "x", "n": 17}', "n"),
    (DONE, '{"prompt": "x", "n": "2"}', "n"),
    (DONE, '{"prompt": "x", "top_k": 1e400}', "top_k"),
    (DONE, '{"prompt": "x", "model": ["tiny"]}', "model"),
    (DONE, '{"prompt": "x", "stream": "yes"}', "stream"),
    (DONE, '{"prompt": "x", "ignore_eos": "no"}', "ignore_eos"),
    (DONE, '{"prompt": "x", "user": 5}', "user"),
    (DONE, '{"prompt": "x", "stop": 5}', "stop"),
    (DONE, '{"prompt": "x", "stop": [1]}', "stop"),
    (DONE, '{"prompt": "x", "stop": [' + ", ".join(f'"s{i}"' for i in range(17)) + "]}", "stop"),
    (DONE, '{"prompt": "x", "logprobs": "3"}', "logprobs"),
    (DONE, '{"prompt": "x", "json_schema": "{not json"}', "json_schema"),
    (DONE, '{"prompt": ' + "[" * 100_000 + "]" * 100_000 + "}", None),
    (DONE, '["prompt", "x"]', None),
    (CHAT, '{"messages": [{"role": "wizard", "content": "hi"}]}', "messages"),
    (CHAT, '{"messages": [{"role": 5, "content": "hi"}]}', "messages"),
    (CHAT, '{"messages": [{"role": "assistant", "content": "hi", "tool_calls": 5}]}', "messages"),
    (CHAT, "{" + USER + ", " + TOOLS + ', "tool_choice": {"type": "function", "function": "f"}}', "tool_choice"),
    (CHAT, "{" + USER + ', "tool_choice": 5}', "tool_choice"),
    (CHAT, "{" + USER + ', "response_format": "json"}', "response_format"),
    (CHAT, "{" + USER + ', "logprobs": 1}', "logprobs"),
])
def test_a_malformed_field_gets_a_400_in_openai_error_shape_naming_it(server, path, body, param):
    _, base = server
    r = post_raw(base, path, body)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["message"] and error["param"] == param


def test_the_largest_seed_with_two_choices_samples_both(server):
    _, base = server
    body = {"prompt": "x", "n": 2, "seed": 2**64 - 1, "max_tokens": 3, "temperature": 1.0, "ignore_eos": True}
    r = post_raw(base, DONE, json.dumps(body))
    assert r.status_code == 200, r.text
    assert [c["index"] for c in r.json()["choices"]] == [0, 1]
    assert r.json()["usage"]["completion_tokens"] == 6


def test_the_engine_still_serves_after_every_malformed_request(server):
    _, base = server
    r = post_raw(base, DONE, json.dumps({"prompt": "x", "max_tokens": 2, "ignore_eos": True}))
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 2

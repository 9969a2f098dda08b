"""The OpenAI-compatible server over real HTTP: completions, chat, streaming, JSON schema, errors, batching, abort."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from tests.inference.conftest import serving

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = {"type": "object", "properties": {"engine": {"enum": ["vllm", "sglang"]}, "block_size": {"type": "integer"}},
          "required": ["engine", "block_size"], "additionalProperties": False}


@pytest.fixture(scope="module")
def server(tiny_chat_model):
    with serving(tiny_chat_model, num_kvcache_blocks=128, max_model_len=1024) as (srv, base):
        yield srv, base


def metric(base: str, name: str) -> float:
    text = requests.get(f"{base}/metrics", timeout=10).text
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert match, f"{name} missing from /metrics"
    return float(match.group(1))


def wait_until(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_health_and_models_answer(server):
    _, base = server
    assert requests.get(f"{base}/health", timeout=10).json() == {"status": "ok"}
    models = requests.get(f"{base}/v1/models", timeout=10).json()
    assert models["data"][0]["id"] == "tiny"


def test_chat_completion_with_response_format_json_schema_returns_valid_json(server):
    _, base = server
    body = {"model": "tiny", "messages": [{"role": "user", "content": "Which engine, which block size?"}],
            "temperature": 0.8, "seed": 5, "max_tokens": 200,
            "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}}}
    reply = requests.post(f"{base}/v1/chat/completions", json=body, timeout=120).json()
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "stop" and choice["message"]["role"] == "assistant"
    doc = json.loads(choice["message"]["content"])
    assert doc["engine"] in ("vllm", "sglang") and isinstance(doc["block_size"], int)
    assert reply["usage"]["completion_tokens"] > 0


def test_chat_content_given_as_text_parts_is_accepted(server):
    _, base = server
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
            "max_tokens": 2, "temperature": 0}
    r = requests.post(f"{base}/v1/chat/completions", json=body, timeout=60)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] >= 1


def test_streamed_completion_concatenates_to_the_non_streamed_text(server):
    _, base = server
    body = {"prompt": "The KV cache", "max_tokens": 12, "temperature": 0, "ignore_eos": True}
    whole = requests.post(f"{base}/v1/completions", json=body, timeout=60).json()["choices"][0]["text"]
    with requests.post(f"{base}/v1/completions", json={**body, "stream": True}, stream=True, timeout=60) as r:
        assert r.headers["Content-Type"] == "text/event-stream"
        lines = [line for line in r.iter_lines() if line]
    assert lines[-1] == b"data: [DONE]"
    chunks = [json.loads(line[len(b"data: "):]) for line in lines[:-1]]
    assert "".join(c["choices"][0]["text"] for c in chunks) == whole
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_streamed_chat_sends_role_then_content_deltas(server):
    _, base = server
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 6, "temperature": 0, "stream": True,
            "ignore_eos": True}
    with requests.post(f"{base}/v1/chat/completions", json=body, stream=True, timeout=60) as r:
        events = [json.loads(line[6:]) for line in r.iter_lines() if line and line != b"data: [DONE]"]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all(e["object"] == "chat.completion.chunk" for e in events)
    assert events[-1]["choices"][0]["finish_reason"] == "length"
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events)


@pytest.mark.parametrize("path,body,param", [
    ("/v1/chat/completions", {"messages": []}, "messages"),
    ("/v1/chat/completions", {"messages": [{"role": "user"}]}, "messages"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages"),
    ("/v1/completions", {"prompt": "x", "max_tokens": -3}, "max_tokens"),
    ("/v1/completions", {"prompt": "x", "temperature": "hot"}, "temperature"),
    ("/v1/completions", {"prompt": ""}, "prompt"),
    ("/v1/completions", {"prompt": "x", "response_format": {"type": "xml"}}, "response_format"),
    ("/v1/completions", {"prompt": "x", "response_format": {"type": "json_schema", "json_schema": {}}}, "response_format"),
    ("/v1/completions", {"prompt": "x", "n": 0}, "n"),
    ("/v1/completions", {"prompt": "x", "presence_penalty": 0.5}, "presence_penalty"),
    ("/v1/completions", {"prompt": "x", "no_such_field": 1}, "no_such_field"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"}, "tool_choice"),
])
def test_invalid_requests_get_400_with_an_openai_style_error(server, path, body, param):
    _, base = server
    r = requests.post(f"{base}{path}", json=body, timeout=30)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"] and error["param"] == param


def test_a_body_that_is_not_json_gets_400(server):
    _, base = server
    r = requests.post(f"{base}/v1/completions", data=b"{nope", timeout=30)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]


def test_a_prompt_longer_than_the_model_allows_gets_400(server):
    _, base = server
    r = requests.post(f"{base}/v1/completions", json={"prompt": list(range(1, 1100))}, timeout=30)
    assert r.status_code == 400 and "max_model_len" in r.json()["error"]["message"]


def test_concurrent_requests_share_forward_passes_and_match_solo_runs(server):
    srv, base = server
    prompts = ["alpha", "beta gamma", "delta epsilon zeta", "eta"]

    def ask(prompt: str) -> str:
        body = {"prompt": prompt, "max_tokens": 16, "temperature": 0, "ignore_eos": True}
        return requests.post(f"{base}/v1/completions", json=body, timeout=120).json()["choices"][0]["text"]

    solo = [ask(p) for p in prompts]
    srv.loop.engine.stats.peak_batch_seqs = 0
    with ThreadPoolExecutor(len(prompts)) as pool:
        together = list(pool.map(ask, prompts))
    assert together == solo
    assert srv.loop.engine.stats.peak_batch_seqs >= 2


def test_a_client_that_disconnects_mid_stream_has_its_sequence_aborted_and_blocks_freed(server):
    srv, base = server
    aborted_before = srv.loop.finished["abort"]
    body = {"prompt": "never ending", "max_tokens": 480, "temperature": 0, "ignore_eos": True, "stream": True}
    r = requests.post(f"{base}/v1/completions", json=body, stream=True, timeout=60)
    lines = r.iter_lines()
    assert next(line for line in lines if line).startswith(b"data: ")
    assert metric(base, "infrawiki_llm_kv_blocks_used") > 0
    r.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
    r.close()
    assert wait_until(lambda: srv.loop.finished["abort"] == aborted_before + 1)
    assert wait_until(lambda: metric(base, "infrawiki_llm_kv_blocks_used") == 0)
    assert metric(base, "infrawiki_llm_running_sequences") == 0


def test_a_client_that_disconnects_while_waiting_for_a_plain_response_is_aborted(server):
    srv, base = server
    aborted_before = srv.loop.finished["abort"]
    payload = json.dumps({"prompt": "wait for me", "max_tokens": 480, "temperature": 0, "ignore_eos": True}).encode()
    host, port = srv.server_address[:2]
    with socket.create_connection((host, port)) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
        assert wait_until(lambda: metric(base, "infrawiki_llm_running_sequences") == 1)
    assert wait_until(lambda: srv.loop.finished["abort"] == aborted_before + 1)
    assert wait_until(lambda: metric(base, "infrawiki_llm_kv_blocks_used") == 0)


def test_metrics_expose_queue_gauges_and_latency_histograms(server):
    _, base = server
    requests.post(f"{base}/v1/completions", json={"prompt": "m", "max_tokens": 3, "ignore_eos": True}, timeout=60)
    text = requests.get(f"{base}/metrics", timeout=10).text
    for name in ("infrawiki_llm_running_sequences", "infrawiki_llm_waiting_sequences", "infrawiki_llm_kv_blocks_used",
                 "infrawiki_llm_generation_tokens_per_second"):
        assert re.search(rf"^{name} \d", text, re.M), name
    assert metric(base, "infrawiki_llm_time_to_first_token_seconds_count") >= 1
    assert metric(base, "infrawiki_llm_time_per_output_token_seconds_count") >= 1
    assert 'infrawiki_llm_time_to_first_token_seconds_bucket{le="+Inf"}' in text


@pytest.mark.slow
def test_python_m_inference_serve_starts_and_answers(tiny_chat_model):
    proc = subprocess.Popen([sys.executable, "-m", "inference.serve", "--model", str(tiny_chat_model), "--port", "0",
                             "--dtype", "float32", "--kv-cache-memory-gib", "0.05", "--max-model-len", "512"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = ""
        while "listening on" not in line:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "server exited before listening"
        base = line.strip().rsplit(" ", 1)[-1]
        r = requests.post(f"{base}/v1/completions", json={"prompt": "hi", "max_tokens": 2}, timeout=60)
        assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 2
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_serve_refuses_a_missing_model_with_a_clear_message(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "inference.serve", "--model", str(tmp_path / "nope.gguf")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "not found" in proc.stderr

"""The server as a public-facing process: body and prompt caps, request framing, timeouts, a long prompt
not stalling others. Real server threads on loopback, raw sockets where a well-behaved client cannot
send what is being tested."""

from __future__ import annotations

import json
import random
import select
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from inference.request_limits import ServerLimits
from inference.server import InferenceServer
from tests.inference.conftest import serving

TIMEOUT_S = 1.5


@pytest.fixture(scope="module")
def server(tiny_chat_model):
    with serving(tiny_chat_model, num_kvcache_blocks=128, max_model_len=512,
                 limits=ServerLimits(max_body_bytes=8 * 1024 * 1024, request_timeout_s=TIMEOUT_S)) as (srv, base):
        yield srv, base


def raw_exchange(srv: InferenceServer, data: bytes, wait_s: float = 10.0) -> tuple[bytes, float]:
    """Send raw bytes, read until the server closes or answers in full; (reply, seconds taken)."""
    start = time.monotonic()
    with socket.create_connection(srv.server_address[:2], timeout=wait_s) as sock:
        sock.sendall(data)
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
                head, _, body = reply.partition(b"\r\n\r\n")
                length = [int(v) for k, v in (line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
                          if k.strip().lower() == b"content-length"]
                if length and len(body) >= length[0]:
                    break
        except TimeoutError:
            pass
    return reply, time.monotonic() - start


def status_and_error(reply: bytes) -> tuple[int, dict]:
    head, _, body = reply.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return status, error


def words(n_chars: int) -> str:
    rng = random.Random(7)
    vocab = ["alpha", "beta", "KV", "cache", "1234", "paged", "über", "attention"]
    out, size = [], 0
    while size < n_chars:
        out.append(rng.choice(vocab))
        size += len(out[-1]) + 1
    return " ".join(out)


def test_a_body_over_the_cap_gets_413_before_it_is_sent(server):
    srv, _ = server
    head = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 20000000\r\n\r\n")
    reply, took = raw_exchange(srv, head)
    status, error = status_and_error(reply)
    assert status == 413 and "at most 8388608" in error["message"] and took < 1.0


def test_a_client_that_sends_an_oversized_body_anyway_reads_the_413(server):
    srv, base = server
    r = requests.post(f"{base}/v1/completions", data=b"x" * (srv.limits.max_body_bytes + 1), timeout=30)
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"


@pytest.mark.parametrize("header,status", [
    (b"Content-Length: -1\r\n", 400),
    (b"Content-Length: abc\r\n", 400),
    (b"Content-Length: 1e3\r\n", 400),
    (b"Content-Length: 5\r\nContent-Length: 6\r\n", 400),
    (b"", 411),
    (b"Transfer-Encoding: chunked\r\n", 411),
])
def test_a_body_without_a_usable_content_length_is_refused_at_once(server, header, status):
    srv, _ = server
    reply, took = raw_exchange(srv, b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + header + b"\r\n{}")
    assert status_and_error(reply)[0] == status
    assert took < TIMEOUT_S / 2  # answered, not left to time out


def test_an_idle_connection_is_closed_after_the_request_timeout(server):
    srv, _ = server
    start = time.monotonic()
    with socket.create_connection(srv.server_address[:2], timeout=10) as sock:
        assert sock.recv(1024) == b""  # the server hung up
    assert TIMEOUT_S * 0.8 < time.monotonic() - start < TIMEOUT_S + 3


def test_a_client_trickling_its_headers_is_dropped_at_the_deadline(server):
    srv, _ = server
    start = time.monotonic()
    with socket.create_connection(srv.server_address[:2], timeout=10) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\n")
        dropped = False
        for i in range(int(TIMEOUT_S * 10) + 40):  # one header line every 0.1 s, well inside any idle timeout
            if select.select([sock], [], [], 0.1)[0]:  # the server closed (or answered): either ends the trickle
                dropped = True
                break
            try:
                sock.sendall(f"X-Pad-{i}: y\r\n".encode())
            except OSError:
                dropped = True
                break
    assert dropped and time.monotonic() - start < TIMEOUT_S + 3


def test_a_body_sent_too_slowly_gets_408(server):
    srv, _ = server
    payload = json.dumps({"prompt": "x", "max_tokens": 1}).encode()
    with socket.create_connection(srv.server_address[:2], timeout=10) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                     + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload[:3])
        start = time.monotonic()
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert status_and_error(reply)[0] == 408 and time.monotonic() - start < TIMEOUT_S + 3


def test_a_prompt_too_long_for_the_context_is_refused_without_stalling_a_small_request(server):
    _, base = server
    big = {"prompt": words(3_500_000), "max_tokens": 1}
    small = {"prompt": "hello", "max_tokens": 2, "temperature": 0, "ignore_eos": True}
    with ThreadPoolExecutor(1) as pool:
        refused = pool.submit(requests.post, f"{base}/v1/completions", json=big, timeout=120)
        time.sleep(0.5)  # the big body is on its way or being handled
        start = time.monotonic()
        r = requests.post(f"{base}/v1/completions", json=small, timeout=120)
        small_s = time.monotonic() - start
        answer = refused.result()
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 2
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "prompt"
    assert "characters" in answer.json()["error"]["message"]
    assert small_s < 2.0, f"a 2-token request took {small_s:.1f} s next to a refused long prompt"


def test_a_long_tokenization_does_not_hold_up_other_requests(server):
    srv, base = server
    text = words(2_000_000)
    srv.loop.engine.tokenize("warm " * 5000)  # the first long text makes a private tokenizer copy
    background = threading.Thread(target=srv.loop.engine.tokenize, args=(text,))
    background.start()
    time.sleep(0.3)
    try:
        r = requests.post(f"{base}/v1/chat/completions", timeout=120, json={
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "temperature": 0, "ignore_eos": True})
        still_tokenizing = background.is_alive()
    finally:
        background.join()
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 3
    assert still_tokenizing, "the small request waited for the long tokenization to finish"

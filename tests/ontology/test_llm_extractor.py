"""The LLM extractor against real HTTP servers: garbage output is rejected, an unreachable server
means "retry later", and (slow) the real inference server yields schema-valid trade-offs."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from ontology.extraction.llm import LlmClient, LlmExtractor, LlmUnavailable, answer_schema, parse_answer
from ontology.extraction.text import sentences
from ontology.extraction.tradeoffs import trade_off_candidates
from tests.conftest import ROOT, require

TRADE_OFF_PAGE = ("If the block size is too large, internal fragmentation increases and memory is wasted, "
                  "but larger blocks improve kernel efficiency. Chunked prefill improves throughput at the cost "
                  "of higher decode latency.")


class _Garbage(BaseHTTPRequestHandler):
    """An OpenAI-shaped server whose model output is not JSON (the network edge of the extractor)."""

    replies = ["this is not json {", '{"is_trade_off": true, "parameter": "Block Size!", "improves": "x"}']

    def do_GET(self):  # noqa: N802 - http.server naming
        self._send({"data": [{"id": "garbage"}]})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = self.replies[hash(body["messages"][0]["content"]) % len(self.replies)]
        self._send({"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})

    def _send(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def garbage_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_output_that_is_not_json_or_breaks_the_schema_is_rejected_with_the_reason(garbage_server):
    extractor = LlmExtractor(LlmClient(garbage_server, "garbage"))
    candidates = trade_off_candidates(sentences([TRADE_OFF_PAGE]))
    facts, rejected = extractor.extract(candidates, "Sys")
    assert facts == []
    assert len(rejected) == len(candidates) == 2
    reasons = " | ".join(error for _, error in rejected)
    assert "not valid JSON" in reasons or "breaks the schema" in reasons
    assert extractor.usage["prompt_tokens"] == 20


def test_parse_answer_names_the_broken_field():
    with pytest.raises(ValueError, match="parameter: String should match pattern"):
        parse_answer('{"is_trade_off": true, "parameter": "Block Size", "improves": "a b", "worsens": "c d"}')
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_answer("{'single': 'quotes'}")
    with pytest.raises(ValueError, match="repeat the parameter"):
        parse_answer('{"is_trade_off": true, "parameter": "block_size", "improves": "block size", "worsens": "memory"}')


def test_a_reply_is_held_to_the_same_metric_length_the_guided_schema_allows():
    limit = answer_schema()["properties"]["improves"]["maxLength"]
    assert limit == answer_schema()["properties"]["worsens"]["maxLength"]
    fits = json.dumps({"is_trade_off": True, "parameter": "block_size", "improves": "t" * limit, "worsens": "memory"})
    assert parse_answer(fits).improves == "t" * limit
    with pytest.raises(ValueError, match="improves: String should have at most"):
        parse_answer(fits.replace("t" * limit, "t" * (limit + 1)))


def test_an_unreachable_server_raises_llm_unavailable():
    client = LlmClient(f"http://127.0.0.1:{_free_port()}/v1", "none", timeout_s=2)
    with pytest.raises(LlmUnavailable, match="unreachable"):
        client.check()
    with pytest.raises(LlmUnavailable):
        client.chat("hi", {"type": "object"})


@pytest.fixture(scope="module")
def inference_server() -> Iterator[str]:
    """The real built-in server with the default model (minutes on CPU to start; kept for the module)."""
    require((ROOT / "inference" / "serve.py").exists(), "inference/serve.py is not there yet")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    log_path = ROOT / ".infrawiki" / f"llm-test-{port}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "inference.serve", "--port", str(port)], cwd=ROOT,
                                stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 300
        while not _answers(url):
            if proc.poll() is not None:
                pytest.fail(f"inference server exited: {log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("inference server did not come up in 300 s")
            time.sleep(1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/models", timeout=2).ok
    except requests.RequestException:
        return False


@pytest.mark.slow
def test_the_real_model_answers_every_candidate_with_a_schema_valid_trade_off_or_a_logged_rejection(inference_server):
    extractor = LlmExtractor(LlmClient(inference_server, "default", timeout_s=300))
    candidates = trade_off_candidates(sentences([TRADE_OFF_PAGE]))
    facts, rejected = extractor.extract(candidates, "Sys")
    assert len(facts) + len(rejected) <= len(candidates)
    for fact in facts:
        assert fact["extractor"] == "llm" and fact["kind"] == "trade_off"
        assert fact["effect"].startswith("improves ") and "; worsens " in fact["effect"]
        assert fact["quote"] in TRADE_OFF_PAGE
    assert extractor.usage["llm_requests"] == len(candidates)
    assert extractor.usage["completion_tokens"] > 0

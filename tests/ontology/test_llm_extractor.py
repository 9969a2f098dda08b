"""The LLM extractor against real HTTP servers: garbage output is rejected, an unreachable server
means "retry later", and (slow) the real inference server with the 0.5B model states a fact that
passes grounding."""
from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ontology.extraction.llm import LlmClient, LlmExtractor, LlmUnavailable, answer_schema, parse_answer
from ontology.extraction.passages import Passage
from ontology.extraction.pipeline import extract_document
from papers.pdf.model import ParsedPdf, ParsedSection

SETUP_PAGE = "We evaluate the system on a server with 8 NVIDIA A100 GPUs."
PASSAGES = [Passage(1, "section", "We set the block size to 16 tokens.", 5.0),
            Passage(1, "section", "The server has 8 NVIDIA A100 GPUs with 80 GB of memory each.", 5.0)]


class _Garbage(BaseHTTPRequestHandler):
    """An OpenAI-shaped server whose model output is not JSON (the network edge of the extractor)."""

    replies = ["this is not json {", '{"facts": [{"quote": "short", "kind": "opinion"}]}']

    def do_GET(self):  # noqa: N802 - http.server naming
        self._send({"data": [{"id": "garbage"}]})

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = self.replies[int("80 GB" in body["messages"][-1]["content"])]
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
    facts, rejected = extractor.extract_passages(PASSAGES, "Sys")
    assert facts == []
    assert len(rejected) == 2
    reasons = " | ".join(error for _, error in rejected)
    assert "not valid JSON" in reasons and "breaks the schema" in reasons and "facts.0.kind" in reasons
    assert extractor.usage["prompt_tokens"] == 20


GOOD_FACT = {"quote": "We set the block size to 16 tokens", "kind": "parameter", "parameter": "block_size", "value": "16",
             "unit": "tokens", "condition": "", "effect": "", "subject": ""}


def test_parse_answer_names_the_broken_field():
    assert parse_answer(json.dumps({"facts": [GOOD_FACT]})).facts[0].parameter == "block_size"
    with pytest.raises(ValueError, match="facts.0.parameter: String should match pattern"):
        parse_answer(json.dumps({"facts": [{**GOOD_FACT, "parameter": "Block Size"}]}))
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_answer("{'single': 'quotes'}")
    with pytest.raises(ValueError, match="facts: List should have at most 3"):
        parse_answer(json.dumps({"facts": [GOOD_FACT] * 4}))


def test_a_reply_is_held_to_the_same_quote_length_the_guided_schema_allows():
    quote = answer_schema()["$defs"]["LlmFact"]["properties"]["quote"]
    fits = json.dumps({"facts": [{**GOOD_FACT, "quote": "q" * quote["minLength"]}]})
    assert parse_answer(fits).facts[0].quote == "q" * quote["minLength"]
    with pytest.raises(ValueError, match="quote: String should have at least"):
        parse_answer(fits.replace("q" * quote["minLength"], "q" * (quote["minLength"] - 1)))


def test_an_unreachable_server_raises_llm_unavailable():
    client = LlmClient(f"http://127.0.0.1:{_free_port()}/v1", "none", timeout_s=2)
    with pytest.raises(LlmUnavailable, match="unreachable"):
        client.check()
    with pytest.raises(LlmUnavailable):
        client.chat("hi", {"type": "object"})


@pytest.fixture(scope="module")
def default_model_server() -> Iterator[str]:
    """The built-in server in this process with the packaged 0.5B model (no second interpreter to start)."""
    from inference.config import Config
    from inference.engine import LLMEngine
    from inference.server import InferenceServer

    engine = LLMEngine(Config(model=None, max_num_seqs=4, max_num_batched_tokens=512, kv_cache_memory_gib=0.25,
                              max_model_len=2048))
    server = InferenceServer(("127.0.0.1", 0), engine, "default")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_real_model_states_a_fact_of_a_setup_passage_that_passes_grounding(default_model_server):
    extractor = LlmExtractor(LlmClient(default_model_server, "default", timeout_s=300), max_passages=1)
    document = ParsedPdf.from_pages([SETUP_PAGE])
    document.sections.append(ParsedSection("4 Evaluation", "4", 1, 1, 1, SETUP_PAGE))
    result = extract_document(document, llm=extractor)
    assert result.stats["llm_requests"] == 1 and result.stats["completion_tokens"] > 0
    llm_facts = [f for f in result.facts if "llm" in f["extractor"]]
    assert llm_facts, (result.stats, result.rejected)
    for fact in llm_facts:
        assert " ".join(fact["quote"].split()).lower() in SETUP_PAGE.lower()
        assert fact["value"] is None or fact["value"] in fact["quote"]

"""OpenAI-compatible HTTP server over one LLMEngine; started by `python -m inference.serve`.

Threads: ThreadingHTTPServer gives each HTTP request a thread that parses and validates the body,
then hands the request to the single engine-loop thread through a queue and waits on its own
queue of events. The loop thread alone touches the engine, stepping it while any sequence is
unfinished, so every concurrent request shares the same forward passes (continuous batching). A
client that disconnects (a write fails, or its socket reads EOF while it waits) gets its sequences
aborted, which frees their KV blocks at once. Requests are checked by openai_api.py: anything this
server does not do gets 400 (an unknown model 404) with an OpenAI-style error body.

Public-facing limits (request_limits.ServerLimits): a body over max_body_bytes gets 413 before it is
read; a body without a usable Content-Length gets 411/400 at once; a request must arrive within
request_timeout_s of the server starting to wait for it (an idle kept-alive connection is closed after
that long, and a slow sender gets 408), so a stalled client cannot keep its thread.
"""

from __future__ import annotations

import contextlib
import io
import json
import queue
import re
import select
import socket
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inference.engine import LLMEngine, RequestOutput, StepEvent
from inference.metrics import TPOT_BUCKETS, TTFT_BUCKETS, Histogram, ThroughputMeter, counter, gauge
from inference.openai_api import (
    ParsedRequest,
    RequestError,
    TokenTexts,
    chat_logprobs,
    completion_logprobs,
    parse_request,
    split_tool_calls,
)
from inference.request_limits import ServerLimits, longest_token_chars
from inference.sampling_params import SamplingParams
from inference.sequence import TokenLogprob


@dataclass
class Pending:
    """A request travelling to the loop thread: one prompt, one sequence per choice; events come back on
    `events` as (kind, choice index, value)."""

    prompt: list[int]
    choices: list[SamplingParams]
    events: queue.Queue[tuple[str, int, Any]] = field(default_factory=queue.Queue)
    seq_ids: dict[int, int] = field(default_factory=dict)  # sequence id -> choice index
    held: list[int] = field(default_factory=list)  # choices admitted once choice 0 has filled the prefix cache
    next_check: float = 0.0  # when the HTTP thread next checks that the client is still connected


class EngineLoop:
    """Runs the engine on one thread, the only one that steps it or adds and aborts its sequences;
    HTTP threads call only its tokenizer, grammar compiler and stop-token check (each reads, none
    changes engine state) and read its counts for /metrics."""

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self.inbox: queue.Queue[Pending] = queue.Queue()
        self.aborts: queue.Queue[Pending] = queue.Queue()
        self.live: dict[int, tuple[Pending, int]] = {}  # sequence id -> its request and choice index
        self.ttft = Histogram("infrawiki_llm_time_to_first_token_seconds", "Time to first token.", TTFT_BUCKETS)
        self.tpot = Histogram("infrawiki_llm_time_per_output_token_seconds", "Mean time per output token.", TPOT_BUCKETS)
        self.throughput = ThroughputMeter()
        self.finished = {"stop": 0, "length": 0, "abort": 0}
        self.errors = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="engine-loop", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self.thread.join(timeout=10)

    def submit(self, pending: Pending) -> None:
        self.inbox.put(pending)
        self._wake.set()

    def abort(self, pending: Pending) -> None:
        self.aborts.put(pending)
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._drain()
            if not self.engine.has_unfinished():
                self._wake.wait(timeout=0.5)
                self._wake.clear()
                continue
            try:
                events = self.engine.step()
            except Exception as exc:  # a bug must not hang every client: fail the live requests loudly
                traceback.print_exc()
                self._fail_all(f"engine error: {exc}")
                continue
            self._dispatch(events)

    def _drain(self) -> None:
        while True:
            try:
                pending = self.inbox.get_nowait()
            except queue.Empty:
                break
            # n > 1: the other choices wait until choice 0 has computed (and cached) the prompt's full blocks,
            # so they read its K/V instead of computing the same prompt again
            share = len(pending.choices) > 1 and self.engine.config.enable_prefix_caching
            first = 1 if share else len(pending.choices)
            pending.held = list(range(first, len(pending.choices)))
            try:
                for index in range(first):
                    self._add(pending, index)
            except Exception as exc:  # ValueError: cannot be admitted (a 400); anything else is a bug (a 500)
                self._drop(pending)
                if not isinstance(exc, ValueError):
                    traceback.print_exc()
                pending.events.put(("error" if isinstance(exc, ValueError) else "fail", 0, str(exc)))
                continue
            pending.events.put(("accepted", 0, None))
        while True:
            try:
                pending = self.aborts.get_nowait()
            except queue.Empty:
                break
            self._drop(pending, count=True)

    def _add(self, pending: Pending, index: int) -> None:
        seq = self.engine.add_request(pending.prompt, pending.choices[index])
        pending.seq_ids[seq.seq_id] = index
        self.live[seq.seq_id] = (pending, index)

    def _drop(self, pending: Pending, count: bool = False) -> None:
        """Abort every live sequence of a request (its client left, or a sibling could not be admitted)."""
        pending.held.clear()
        for seq_id in list(pending.seq_ids):
            if self.live.pop(seq_id, None) is not None and self.engine.abort(seq_id) and count:
                self.finished["abort"] += 1

    def _dispatch(self, events: list[StepEvent]) -> None:
        now = time.monotonic()
        for ev in events:
            entry = self.live.get(ev.seq.seq_id)
            if ev.token_id is not None:
                self.throughput.add(1, now)
            if entry is None:
                continue
            pending, index = entry
            if ev.token_id is not None:
                record = ev.seq.logprobs[-1] if ev.seq.params.logprobs is not None else None
                pending.events.put(("delta", index, (ev.text_delta, ev.token_id, record)))
            if index == 0 and pending.held and ev.token_id is not None:
                try:
                    for sibling in pending.held:
                        self._add(pending, sibling)
                    pending.held.clear()
                except Exception as exc:  # the request fails, not the loop
                    self._drop(pending)
                    pending.events.put(("fail", 0, f"could not admit every choice: {exc}"))
                    continue
            if ev.finished:
                out = self.engine.output(ev.seq)
                if out.metrics is not None:
                    self.ttft.observe(out.metrics.ttft_s)
                    if out.metrics.num_output_tokens > 1:
                        self.tpot.observe(out.metrics.tpot_s)
                self.finished[out.finish_reason or "stop"] = self.finished.get(out.finish_reason or "stop", 0) + 1
                pending.events.put(("done", index, out))
                del self.live[ev.seq.seq_id]

    def _fail_all(self, message: str) -> None:
        self.errors += 1
        requests = {id(pending): pending for pending, _ in self.live.values()}
        for seq_id in list(self.live):
            self.engine.abort(seq_id)
        self.live.clear()
        for pending in requests.values():
            pending.held.clear()
            pending.events.put(("fail", 0, message))

    def render_metrics(self) -> str:
        e = self.engine
        lines: list[str] = []
        lines += gauge("infrawiki_llm_running_sequences", "Sequences in the running batch.", len(e.scheduler.running))
        lines += gauge("infrawiki_llm_waiting_sequences", "Sequences waiting for admission.", len(e.scheduler.waiting))
        lines += gauge("infrawiki_llm_kv_blocks_used", "KV-cache blocks in use.", e.block_manager.num_used_blocks)
        lines += gauge("infrawiki_llm_kv_blocks_total", "KV-cache blocks in all.", e.block_manager.num_blocks)
        lines += gauge("infrawiki_llm_generation_tokens_per_second", "Generated tokens/s over the last 10 s.",
                       round(self.throughput.rate(), 3))
        lines += counter("infrawiki_llm_generated_tokens_total", "Tokens generated.", e.stats.generated_tokens)
        lines += counter("infrawiki_llm_prompt_tokens_total", "Prompt tokens computed.", e.stats.prompt_tokens)
        lines += counter("infrawiki_llm_prefix_cache_hit_tokens_total", "Prompt tokens served from the prefix cache.",
                       e.block_manager.prefix_hits)
        lines += counter("infrawiki_llm_prefix_cache_query_tokens_total", "Prompt tokens looked up in the prefix cache.",
                       e.block_manager.prefix_queries)
        lines += counter("infrawiki_llm_preemptions_total", "Sequences preempted.", e.scheduler.num_preemptions)
        lines += ["# HELP infrawiki_llm_requests_finished_total Requests finished, by reason.",
                  "# TYPE infrawiki_llm_requests_finished_total counter"]
        lines += [f'infrawiki_llm_requests_finished_total{{reason="{r}"}} {n}' for r, n in sorted(self.finished.items())]
        lines += self.ttft.render() + self.tpot.render()
        return "\n".join(lines) + "\n"


# -- HTTP ------------------------------------------------------------------------------------------------

DIGITS = re.compile(r"[0-9]{1,19}")


class DeadlineReader(io.RawIOBase):
    """A connection's read side that raises TimeoutError once `deadline` (time.monotonic) has passed, however
    the bytes trickle in; between reads the socket keeps `idle_s` as its timeout (which bounds writes)."""

    def __init__(self, sock: socket.socket, idle_s: float) -> None:
        self.sock = sock
        self.idle_s = idle_s
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.idle_s if self.deadline is None else self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(left)
        try:
            return self.sock.recv_into(buffer)
        finally:
            self.sock.settimeout(self.idle_s)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: InferenceServer

    def setup(self) -> None:
        super().setup()
        idle_s = self.server.limits.request_timeout_s
        self.connection.settimeout(idle_s)
        self.reader = DeadlineReader(self.connection, idle_s)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        """One request, which must arrive in full within request_timeout_s of now."""
        self.reader.deadline = time.monotonic() + self.server.limits.request_timeout_s
        super().handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:
            super().log_message(format, *args)

    # plumbing
    def _send_json(self, status: int, payload: dict[str, Any], close: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, param: str | None = None, kind: str = "invalid_request_error",
               code: str | None = None, close: bool = False) -> None:
        """An OpenAI error body; `close` when the rest of the connection's bytes cannot be trusted (a body
        left unread or cut short), so they are never read as the next request."""
        self._send_json(status, {"error": {"message": message, "type": kind, "param": param, "code": code}}, close)

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def do_GET(self) -> None:
        loop = self.server.loop
        if self.path == "/health":
            self._send_json(200, {"status": "ok" if loop.thread.is_alive() else "engine stopped"})
        elif self.path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [self.server.model_card()]})
        elif self.path.startswith("/v1/models/"):
            name = self.path.removeprefix("/v1/models/")
            if name in self.server.model_names:
                self._send_json(200, {**self.server.model_card(), "id": name})
            else:
                self._error(404, f"The model '{name}' does not exist", "model", code="model_not_found")
        elif self.path == "/metrics":
            data = loop.render_metrics().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._error(404, f"no route {self.path}", kind="not_found_error")

    def do_POST(self) -> None:
        if self.path not in ("/v1/completions", "/v1/chat/completions"):
            self._error(404, f"no route {self.path}", kind="not_found_error", close=True)
            return
        chat = self.path == "/v1/chat/completions"
        request = self._parse(chat)
        if request is None:
            return
        pending = Pending(request.prompt, request.choices)
        self.server.loop.submit(pending)
        kind, _, value = pending.events.get()
        if kind == "error":
            self._error(400, value)
            return
        if kind == "fail":
            self._error(500, value, kind="server_error")
            return
        answer = Answer(self.server, request, ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24])
        if request.stream:
            self._stream(pending, answer)
        else:
            self._complete(pending, answer)

    def _parse(self, chat: bool) -> ParsedRequest | None:
        """The validated request, or None once an error answer has been sent (never an empty reply)."""
        try:
            body = self._read_json()
            return parse_request(self.server.loop.engine, body, chat, self.server.model_names, self.server.limits,
                                 self.server.max_prompt_chars)
        except RequestError as exc:
            self._error(exc.status, str(exc), exc.param, code=exc.code,
                        close=self.close_connection or exc.status in (411, 413))
            if exc.status == 413:
                self._discard_unread()
        except ValueError as exc:
            self._error(400, str(exc))
        except TimeoutError:
            self._error(408, f"the request did not arrive within {self.server.limits.request_timeout_s:g} s",
                        code="request_timeout", close=True)
        except Exception as exc:  # a bug: say so as a 500 rather than drop the connection with no answer
            traceback.print_exc()
            self._error(500, f"internal error while reading the request: {type(exc).__name__}", kind="server_error",
                        close=True)
        return None

    def _discard_unread(self) -> None:
        """Read and drop what the client is still sending, until it stops or the request's deadline: a client
        that sends its whole body before reading (most do) would otherwise meet a reset, not the 413."""
        with contextlib.suppress(OSError):
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            while self.rfile.read1(65536):
                pass

    def _read_json(self) -> dict[str, Any]:
        """The body as a JSON object. Content-Length must be given as plain digits and be at most
        max_body_bytes; the body is not read otherwise (the connection is closed after the answer)."""
        limit = self.server.limits.max_body_bytes
        if self.headers.get("Transfer-Encoding") is not None:
            raise RequestError("send the body with a Content-Length (Transfer-Encoding is not supported)",
                               status=411, code="length_required")
        given = self.headers.get_all("Content-Length") or []
        if not given:
            raise RequestError("Content-Length is required", status=411, code="length_required")
        if len(set(given)) > 1 or not DIGITS.fullmatch(given[0].strip()):
            self.close_connection = True
            raise RequestError(f"Content-Length must be one non-negative integer, got {', '.join(given)!r}")
        length = int(given[0])
        if length > limit:
            raise RequestError(f"request body is {length} bytes; this server accepts at most {limit}",
                               status=413, code="request_too_large")
        data = self.rfile.read(length)
        if len(data) < length:
            self.close_connection = True
            raise RequestError(f"request body ended after {len(data)} of {length} bytes")
        try:
            body = json.loads(data or b"null", parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, NaN, too deep, too many digits
            raise RequestError(f"request body is not valid JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise RequestError("request body must be a JSON object")
        return body

    def _wait(self, pending: Pending) -> tuple[str, int, Any] | None:
        """Next event, or None (after aborting) when the client has gone away (checked every 0.2 s)."""
        while True:
            try:
                event = pending.events.get(timeout=0.2)
            except queue.Empty:
                event = None
            now = time.monotonic()
            if now >= pending.next_check and (event is None or event[0] == "delta"):
                pending.next_check = now + 0.2
                if self._client_gone():
                    self.server.loop.abort(pending)
                    return None
            if event is not None:
                return event

    def _complete(self, pending: Pending, answer: Answer) -> None:
        outputs: dict[int, RequestOutput] = {}
        while len(outputs) < len(pending.choices) and (event := self._wait(pending)) is not None:
            kind, index, value = event
            if kind == "fail":
                self.server.loop.abort(pending)
                self._error(500, value, kind="server_error")
                return
            if kind == "done":
                outputs[index] = value
        if len(outputs) == len(pending.choices):
            # a client that left (or stopped reading) just as its answer was ready: nothing is left to free
            with contextlib.suppress(OSError):
                self._send_json(200, answer.whole([outputs[i] for i in range(len(outputs))]))

    def _stream(self, pending: Pending, answer: Answer) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        outputs: dict[int, RequestOutput] = {}
        try:
            for first in answer.opening_chunks():
                self._sse(first)
            while len(outputs) < len(pending.choices) and (event := self._wait(pending)) is not None:
                kind, index, value = event
                if kind == "fail":
                    self.server.loop.abort(pending)
                    self._sse({"error": {"message": value, "type": "server_error"}})
                    return
                chunk = answer.delta(index, *value) if kind == "delta" else answer.closing(index, value)
                if kind == "done":
                    outputs[index] = value
                if chunk is not None:
                    self._sse(chunk)
            if len(outputs) == len(pending.choices):
                if answer.request.include_usage:
                    self._sse(answer.usage_chunk([outputs[i] for i in range(len(outputs))]))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
        except OSError:  # the client left, or stopped reading for request_timeout_s
            self.close_connection = True
            self.server.loop.abort(pending)

    def _sse(self, payload: dict[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        self.wfile.flush()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class Answer:
    """Builds one request's response: the whole body, or its stream of chunks (one choice per index)."""

    def __init__(self, server: InferenceServer, request: ParsedRequest, rid: str) -> None:
        self.server = server
        self.engine = server.loop.engine
        self.request = request
        self.rid = rid
        self.created = int(time.time())
        self.texts = server.token_texts
        n = len(request.choices)
        self.unsent: list[list[TokenLogprob]] = [[] for _ in range(n)]  # streamed log-probabilities not yet sent
        self.sent_chars = [0] * n

    def _envelope(self, obj: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        body = {"id": self.rid, "object": obj, "created": self.created, "model": self.server.model_name,
                "choices": choices}
        if self.request.stream and self.request.include_usage:
            body["usage"] = None
        return body

    def _records(self, index: int, out: RequestOutput) -> list[TokenLogprob]:
        records = out.logprobs or []
        # the EOS token that ended the text is not part of it
        if records and out.token_ids and self.engine.is_stop_token(out.token_ids[-1], self.request.choices[index]):
            records = records[:-1]
        return records

    def _logprobs(self, records: list[TokenLogprob], offset: int = 0) -> dict[str, Any] | None:
        if self.request.logprobs is None:
            return None
        return chat_logprobs(records, self.texts) if self.request.chat else completion_logprobs(records, self.texts,
                                                                                                 offset)

    def _message(self, out: RequestOutput) -> tuple[dict[str, Any], str | None]:
        """The chat message of one output and its finish reason (tool calls parsed out when tools were on offer)."""
        message: dict[str, Any] = {"role": "assistant", "content": out.text}
        finish = out.finish_reason
        if self.request.tool_names:
            message["content"], calls = split_tool_calls(out.text, list(self.request.tool_names))
            if calls:
                message["tool_calls"] = calls
                finish = "tool_calls" if finish == "stop" else finish
        return message, finish

    def usage(self, outputs: list[RequestOutput]) -> dict[str, Any]:
        completion = sum(len(o.token_ids) for o in outputs)
        prompt = len(self.request.prompt)
        cached = outputs[0].metrics.num_cached_tokens if outputs[0].metrics is not None else 0
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached}}

    def whole(self, outputs: list[RequestOutput]) -> dict[str, Any]:
        choices = []
        for index, out in enumerate(outputs):
            logprobs = self._logprobs(self._records(index, out))
            if self.request.chat:
                message, finish = self._message(out)
                choices.append({"index": index, "message": message, "logprobs": logprobs, "finish_reason": finish})
            else:
                choices.append({"index": index, "text": out.text, "logprobs": logprobs,
                                "finish_reason": out.finish_reason})
        body = self._envelope("chat.completion" if self.request.chat else "text_completion", choices)
        return {**body, "usage": self.usage(outputs)}

    def _chunk(self, index: int, text: str | None, finish: str | None, records: list[TokenLogprob],
               delta: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.request.chat:
            delta = delta if delta is not None else ({"content": text} if text else {})
            choice = {"index": index, "delta": delta, "logprobs": self._logprobs(records) if records else None,
                      "finish_reason": finish}
            return self._envelope("chat.completion.chunk", [choice])
        logprobs = self._logprobs(records, self.sent_chars[index]) if records else None
        self.sent_chars[index] += len(text or "")
        return self._envelope("text_completion", [{"index": index, "text": text or "", "logprobs": logprobs,
                                                   "finish_reason": finish}])

    def opening_chunks(self) -> list[dict[str, Any]]:
        if not self.request.chat:
            return []
        return [self._chunk(i, None, None, [], {"role": "assistant", "content": ""})
                for i in range(len(self.request.choices))]

    def delta(self, index: int, text: str, token_id: int, record: TokenLogprob | None) -> dict[str, Any] | None:
        """A chunk for the newest token's text, or None while there is nothing to send yet. With tools on
        offer the text is held back: it is only known to be a tool call or content once it is complete."""
        if record is not None and not self.engine.is_stop_token(token_id, self.request.choices[index]):
            self.unsent[index].append(record)
        if self.request.tool_names or not text:
            return None
        records, self.unsent[index] = self.unsent[index], []
        return self._chunk(index, text, None, records)

    def closing(self, index: int, out: RequestOutput) -> dict[str, Any]:
        records, self.unsent[index] = self.unsent[index], []
        if self.request.chat and self.request.tool_names:
            message, finish = self._message(out)
            delta: dict[str, Any] = {}
            if message["content"]:
                delta["content"] = message["content"]
            if "tool_calls" in message:
                delta["tool_calls"] = [{"index": k, **call} for k, call in enumerate(message["tool_calls"])]
            return self._chunk(index, None, finish, records, delta)
        return self._chunk(index, None, out.finish_reason, records)

    def usage_chunk(self, outputs: list[RequestOutput]) -> dict[str, Any]:
        return {**self._envelope("chat.completion.chunk" if self.request.chat else "text_completion", []),
                "usage": self.usage(outputs)}


class InferenceServer(ThreadingHTTPServer):
    """The HTTP server; `model_name` is what /v1/models lists, `aliases` are further names requests may use."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], engine: LLMEngine, model_name: str, verbose: bool = False,
                 aliases: tuple[str, ...] = (), limits: ServerLimits | None = None) -> None:
        self.limits = limits or ServerLimits()
        tokenizer = engine.tokenizer
        # a prompt text longer than this cannot fit max_model_len tokens: refused without tokenizing it
        self.max_prompt_chars = (engine.config.max_model_len * longest_token_chars(tokenizer)
                                 if tokenizer is not None else None)
        super().__init__(address, Handler)
        self.loop = EngineLoop(engine)
        self.model_name = model_name
        self.model_names = {model_name, *aliases}
        self.created = int(time.time())
        self.verbose = verbose
        self.token_texts = TokenTexts(engine)

    def model_card(self) -> dict[str, Any]:
        length = self.loop.engine.config.max_model_len
        return {"id": self.model_name, "object": "model", "created": self.created, "owned_by": "infrawiki",
                "max_model_len": length, "context_length": length}

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        if not self.loop.thread.is_alive():
            self.loop.start()
        super().serve_forever(poll_interval)

    def server_close(self) -> None:
        self.loop.stop()
        super().server_close()

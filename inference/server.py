"""OpenAI-compatible HTTP server over one LLMEngine; started by `python -m inference.serve`.

Threads: ThreadingHTTPServer gives each HTTP request a thread that parses and validates the body,
then hands the request to the single engine-loop thread through a queue and waits on its own
queue of events. The loop thread alone touches the engine, stepping it while any sequence is
unfinished, so every concurrent request shares the same forward passes (continuous batching). A
client that disconnects (a write fails, or its socket reads EOF while it waits) gets its sequence
aborted, which frees its KV blocks at once. Invalid requests get 400 with an OpenAI-style error body.
"""

from __future__ import annotations

import contextlib
import json
import queue
import select
import socket
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inference.engine import LLMEngine, StepEvent
from inference.metrics import TPOT_BUCKETS, TTFT_BUCKETS, Histogram, ThroughputMeter, gauge
from inference.sampling_params import SamplingParams


class RequestError(ValueError):
    """A client mistake: becomes a 400 with an OpenAI-style error body."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass
class Pending:
    """A request travelling to the loop thread; events come back on `events`."""

    prompt: list[int]
    params: SamplingParams
    events: queue.Queue = field(default_factory=queue.Queue)
    seq_id: int | None = None
    next_check: float = 0.0  # when the HTTP thread next checks that the client is still connected


class EngineLoop:
    """Runs the engine on one thread; the only place that calls engine methods after start-up."""

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self.inbox: queue.Queue[Pending] = queue.Queue()
        self.aborts: queue.Queue[int] = queue.Queue()
        self.live: dict[int, Pending] = {}
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
        if pending.seq_id is not None:
            self.aborts.put(pending.seq_id)
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
            try:
                seq = self.engine.add_request(pending.prompt, pending.params)
            except ValueError as exc:
                pending.events.put(("error", str(exc)))
                continue
            pending.seq_id = seq.seq_id
            self.live[seq.seq_id] = pending
            pending.events.put(("accepted", seq.seq_id))
        while True:
            try:
                seq_id = self.aborts.get_nowait()
            except queue.Empty:
                break
            if self.live.pop(seq_id, None) is not None and self.engine.abort(seq_id):
                self.finished["abort"] += 1

    def _dispatch(self, events: list[StepEvent]) -> None:
        now = time.monotonic()
        for ev in events:
            pending = self.live.get(ev.seq.seq_id)
            if ev.token_id is not None:
                self.throughput.add(1, now)
            if pending is None:
                continue
            if ev.text_delta or ev.token_id is not None:
                pending.events.put(("delta", ev.text_delta))
            if ev.finished:
                out = self.engine.output(ev.seq)
                if out.metrics is not None:
                    self.ttft.observe(out.metrics.ttft_s)
                    if out.metrics.num_output_tokens > 1:
                        self.tpot.observe(out.metrics.tpot_s)
                self.finished[out.finish_reason or "stop"] = self.finished.get(out.finish_reason or "stop", 0) + 1
                pending.events.put(("done", out))
                del self.live[ev.seq.seq_id]

    def _fail_all(self, message: str) -> None:
        self.errors += 1
        for seq_id, pending in list(self.live.items()):
            self.engine.abort(seq_id)
            pending.events.put(("fail", message))
        self.live.clear()

    def render_metrics(self) -> str:
        e = self.engine
        lines: list[str] = []
        lines += gauge("infrawiki_llm_running_sequences", "Sequences in the running batch.", len(e.scheduler.running))
        lines += gauge("infrawiki_llm_waiting_sequences", "Sequences waiting for admission.", len(e.scheduler.waiting))
        lines += gauge("infrawiki_llm_kv_blocks_used", "KV-cache blocks in use.", e.block_manager.num_used_blocks)
        lines += gauge("infrawiki_llm_kv_blocks_total", "KV-cache blocks in all.", e.block_manager.num_blocks)
        lines += gauge("infrawiki_llm_generation_tokens_per_second", "Generated tokens/s over the last 10 s.",
                       round(self.throughput.rate(), 3))
        lines += gauge("infrawiki_llm_generated_tokens_total", "Tokens generated.", e.stats.generated_tokens, "counter")
        lines += gauge("infrawiki_llm_prompt_tokens_total", "Prompt tokens computed.", e.stats.prompt_tokens, "counter")
        lines += gauge("infrawiki_llm_prefix_cache_hit_tokens_total", "Prompt tokens served from the prefix cache.",
                       e.block_manager.prefix_hits, "counter")
        lines += gauge("infrawiki_llm_prefix_cache_query_tokens_total", "Prompt tokens looked up in the prefix cache.",
                       e.block_manager.prefix_queries, "counter")
        lines += gauge("infrawiki_llm_preemptions_total", "Sequences preempted.", e.scheduler.num_preemptions, "counter")
        lines += ["# HELP infrawiki_llm_requests_finished_total Requests finished, by reason.",
                  "# TYPE infrawiki_llm_requests_finished_total counter"]
        lines += [f'infrawiki_llm_requests_finished_total{{reason="{r}"}} {n}' for r, n in sorted(self.finished.items())]
        lines += self.ttft.render() + self.tpot.render()
        return "\n".join(lines) + "\n"


# -- request parsing ------------------------------------------------------------------------------------

def _number(body: dict[str, Any], key: str, default: Any, kind: type = float) -> Any:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not isinstance(value, int)):
        raise RequestError(f"'{key}' must be {'an integer' if kind is int else 'a number'}", key)
    return kind(value)


def parse_sampling(body: dict[str, Any], default_max_tokens: int) -> SamplingParams:
    if body.get("n", 1) != 1:
        raise RequestError("only n=1 is supported", "n")
    schema = None
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
                raise RequestError("response_format.json_schema.schema must be a JSON schema object", "response_format")
            schema = spec["schema"]
        elif kind == "json_object":
            schema = {"type": "object"}
        elif kind != "text":
            raise RequestError("response_format.type must be 'text', 'json_object' or 'json_schema'", "response_format")
    if body.get("json_schema") is not None:  # vLLM-style extension
        schema = body["json_schema"]
    stop = body.get("stop") or []
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    try:
        return SamplingParams(
            max_tokens=_number({"max_tokens": max_tokens}, "max_tokens", default_max_tokens, int),
            temperature=_number(body, "temperature", 1.0),
            top_p=_number(body, "top_p", 1.0),
            top_k=_number(body, "top_k", -1, int),
            seed=_number(body, "seed", None, int),
            stop=[stop] if isinstance(stop, str) else stop,
            ignore_eos=bool(body.get("ignore_eos", False)),
            json_schema=schema,
        )
    except RequestError:
        raise
    except ValueError as exc:  # SamplingParams messages start with the field's name
        field_name = str(exc).split(" ", 1)[0]
        raise RequestError(str(exc), field_name if field_name in SamplingParams.__dataclass_fields__ else None) from exc


def parse_messages(messages: Any) -> list[dict[str, str]]:
    """OpenAI chat messages -> [{role, content}] with string content (text parts of a content list are joined)."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list of {role, content} objects", "messages")
    out = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
            content = "".join(p for p in parts if isinstance(p, str)) if len(parts) == len(content) else None
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(content, str):
            raise RequestError("each message needs a string 'role' and a text 'content'", "messages")
        out.append({"role": m["role"], "content": content})
    return out


def parse_prompt(engine: LLMEngine, body: dict[str, Any], chat: bool) -> list[int]:
    try:
        if chat:
            return engine.chat_prompt(parse_messages(body.get("messages")))
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
            prompt = prompt[0]
        if isinstance(prompt, str) and prompt:
            return engine.tokenize(prompt)
        if isinstance(prompt, list) and prompt and all(isinstance(t, int) for t in prompt):
            return engine.tokenize(prompt)
        raise RequestError("'prompt' must be a non-empty string or a list of token ids", "prompt")
    except RequestError:
        raise
    except ValueError as exc:
        raise RequestError(str(exc), "messages" if chat else "prompt") from exc


# -- HTTP ------------------------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: InferenceServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:
            super().log_message(format, *args)

    # plumbing
    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, param: str | None = None, kind: str = "invalid_request_error") -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": param, "code": None}})

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
            self._send_json(200, {"object": "list", "data": [
                {"id": self.server.model_name, "object": "model", "created": self.server.created, "owned_by": "infrawiki",
                 "max_model_len": loop.engine.config.max_model_len}]})
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
            self._error(404, f"no route {self.path}", kind="not_found_error")
            return
        chat = self.path == "/v1/chat/completions"
        try:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"null")
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RequestError(f"request body is not valid JSON: {exc}") from exc
            if not isinstance(body, dict):
                raise RequestError("request body must be a JSON object")
            engine = self.server.loop.engine
            params = parse_sampling(body, default_max_tokens=1024 if chat else 16)
            prompt = parse_prompt(engine, body, chat)
            if params.json_schema is not None and engine.guided is not None:
                engine.guided.compile(params.json_schema)  # compile here so a bad schema is a 400
        except RequestError as exc:
            self._error(400, str(exc), exc.param)
            return
        except ValueError as exc:
            self._error(400, str(exc))
            return
        pending = Pending(prompt, params)
        self.server.loop.submit(pending)
        kind, value = pending.events.get()
        if kind == "error":
            self._error(400, value)
            return
        rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        if body.get("stream"):
            self._stream(pending, rid, chat)
        else:
            self._complete(pending, rid, chat)

    def _wait(self, pending: Pending) -> tuple[str, Any] | None:
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

    def _complete(self, pending: Pending, rid: str, chat: bool) -> None:
        while (event := self._wait(pending)) is not None:
            kind, value = event
            if kind == "fail":
                self._error(500, value, kind="server_error")
                return
            if kind == "done":
                out = value
                usage = {"prompt_tokens": len(pending.prompt), "completion_tokens": len(out.token_ids),
                         "total_tokens": len(pending.prompt) + len(out.token_ids)}
                if chat:
                    choice = {"index": 0, "message": {"role": "assistant", "content": out.text},
                              "finish_reason": out.finish_reason}
                else:
                    choice = {"index": 0, "text": out.text, "logprobs": None, "finish_reason": out.finish_reason}
                # a client that left just as its answer was ready: nothing is left to free
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send_json(200, {"id": rid, "object": "chat.completion" if chat else "text_completion",
                                          "created": int(time.time()), "model": self.server.model_name,
                                          "choices": [choice], "usage": usage})
                return

    def _stream(self, pending: Pending, rid: str, chat: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        obj = "chat.completion.chunk" if chat else "text_completion"

        def chunk(text: str | None, finish: str | None, first: bool = False) -> dict[str, Any]:
            if chat:
                delta: dict[str, Any] = {"role": "assistant"} if first else {}
                if text:
                    delta["content"] = text
                choice = {"index": 0, "delta": delta, "finish_reason": finish}
            else:
                choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish}
            return {"id": rid, "object": obj, "created": int(time.time()), "model": self.server.model_name,
                    "choices": [choice]}

        try:
            if chat:
                self._sse(chunk(None, None, first=True))
            while (event := self._wait(pending)) is not None:
                kind, value = event
                if kind == "delta" and value:
                    self._sse(chunk(value, None))
                elif kind == "fail":
                    self._sse({"error": {"message": value, "type": "server_error"}})
                    break
                elif kind == "done":
                    self._sse(chunk(None, value.finish_reason))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    break
        except (BrokenPipeError, ConnectionResetError):
            self.server.loop.abort(pending)

    def _sse(self, payload: dict[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        self.wfile.flush()


class InferenceServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], engine: LLMEngine, model_name: str, verbose: bool = False) -> None:
        super().__init__(address, Handler)
        self.loop = EngineLoop(engine)
        self.model_name = model_name
        self.created = int(time.time())
        self.verbose = verbose

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        if not self.loop.thread.is_alive():
            self.loop.start()
        super().serve_forever(poll_interval)

    def server_close(self) -> None:
        self.loop.stop()
        super().server_close()

"""OpenAI request bodies -> engine requests, and engine outputs -> OpenAI response pieces; used by server.py.

Every field OpenAI defines for `/v1/chat/completions` and `/v1/completions` is either honoured, or
accepted only at the value that means "off" (a penalty of 0, `echo` false), or refused with a 400
that names it; an unknown field is refused too, so a client never gets an answer that silently
ignored part of its request. `user` is the one field accepted and unused: it labels the caller and
changes nothing in the output. Tool calls use the Hermes format (`<tool_call>{"name", "arguments"}
</tool_call>`) that Qwen2/2.5 chat templates teach the model; the calls are decoded under an
xgrammar structural tag built from the tools' JSON schemas, so their arguments always parse.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any, cast

from inference.engine import LLMEngine
from inference.request_limits import ServerLimits, check_grammar
from inference.sampling_params import MAX_LOGPROBS, SEED_MAX, SamplingParams
from inference.sequence import TokenLogprob

MAX_N = 16  # choices per request: each is a sequence in the running batch
MAX_STOP = 16  # stop strings per request: each is searched for after every token
MAX_TOOLS = 128  # functions per request: each becomes two tags of the tool-call grammar
ROLES = ("system", "developer", "user", "assistant", "tool")
CALL_START = re.compile(r'<tool_call>\s*|(?=\{\s*"name"\s*:)')
CALL_END = re.compile(r"\s*</tool_call>")
FENCE_OPEN = re.compile(r"```(?:json)?[ \t]*\n?[ \t]*$")  # a Markdown fence right before a bare call
FENCE_CLOSE = re.compile(r"\s*```")
# How a call may begin, with the end that closes it: the Hermes tag, the compact bare object small Qwen
# models often write instead, and that object pretty-printed (inside a ```json fence, as they also do).
CALL_FORMS = (("<tool_call>\n{\"name\": \"", '", "arguments": ', "}\n</tool_call>"),
              ('{"name": "', '", "arguments": ', "}"),
              ('{\n  "name": "', '",\n  "arguments": ', "\n}"))
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

COMMON_FIELDS = {"model", "stream", "stream_options", "max_tokens", "temperature", "top_p", "n", "stop", "seed",
                 "logprobs", "user", "presence_penalty", "frequency_penalty", "logit_bias", "response_format",
                 "top_k", "ignore_eos", "json_schema"}  # the last three: vLLM's extensions, honoured here too
CHAT_FIELDS = COMMON_FIELDS | {"messages", "max_completion_tokens", "top_logprobs", "tools", "tool_choice",
                               "parallel_tool_calls", "store", "metadata", "service_tier", "modalities"}
COMPLETION_FIELDS = COMMON_FIELDS | {"prompt", "echo", "suffix", "best_of"}
# fields accepted only at the value that asks for nothing this server does not do
OFF_VALUES: dict[str, tuple[Any, ...]] = {
    "presence_penalty": (0, 0.0), "frequency_penalty": (0, 0.0), "logit_bias": ({},), "echo": (False,),
    "suffix": ("",), "best_of": (1,), "store": (False,), "metadata": ({},), "service_tier": ("auto", "default"),
    "modalities": (["text"],),
}


class RequestError(ValueError):
    """A client mistake: becomes an OpenAI-style error body with this status (400 unless said otherwise)."""

    def __init__(self, message: str, param: str | None = None, status: int = 400, code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.status = status
        self.code = code


@dataclass
class ParsedRequest:
    """One validated request: the prompt once, and one SamplingParams per choice (`n`)."""

    chat: bool
    prompt: list[int]
    choices: list[SamplingParams]
    stream: bool = False
    include_usage: bool = False
    tool_names: tuple[str, ...] = ()  # the offered tools whose calls are parsed out of the text
    logprobs: int | None = None  # alternatives per token when log-probabilities were asked for


def parse_request(engine: LLMEngine, body: dict[str, Any], chat: bool, model_names: set[str],
                  limits: ServerLimits | None = None, max_prompt_chars: int | None = None) -> ParsedRequest:
    """Validate an OpenAI body against what this server does; RequestError says what and where.
    `max_prompt_chars`: a longer prompt text is refused before it is tokenized (request_limits.py)."""
    limits = limits or ServerLimits()
    allowed = CHAT_FIELDS if chat else COMPLETION_FIELDS
    for key, value in body.items():
        if key not in allowed:
            raise RequestError(f"unsupported parameter '{key}' (this server does not implement it)", key)
        if key in OFF_VALUES and value is not None and value not in OFF_VALUES[key]:
            if key == "best_of" and value == body.get("n"):
                continue
            raise RequestError(f"'{key}' = {json.dumps(value)} is not supported; only "
                               f"{' or '.join(json.dumps(v) for v in OFF_VALUES[key])}", key)
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise RequestError("'model' must be a string", "model")
    for key in ("stream", "ignore_eos"):
        if body.get(key) is not None and not isinstance(body[key], bool):
            raise RequestError(f"'{key}' must be a boolean", key)
    if body.get("user") is not None and not isinstance(body["user"], str):
        raise RequestError("'user' must be a string", "user")
    if model is not None and model not in model_names:
        raise RequestError(f"The model '{model}' does not exist; this server serves {sorted(model_names)}", "model",
                           status=404, code="model_not_found")
    stream = bool(body.get("stream"))
    options = body.get("stream_options")
    if options is not None and (not stream or not isinstance(options, dict) or set(options) - {"include_usage"}):
        raise RequestError("stream_options needs stream=true and takes only {'include_usage': bool}", "stream_options")
    tools, tool_choice = parse_tools(engine, body) if chat else ([], "none")
    grammar = guidance(body, tools, tool_choice)
    grammar_param = "tools" if "structural_tag" in grammar else "json_schema" if "json_schema" in body else \
        "response_format"
    for spec in grammar.values():
        try:
            check_grammar(spec, limits.max_schema_bytes)
        except ValueError as exc:
            raise RequestError(str(exc), grammar_param) from exc
    n = integer(body, "n", 1)
    if not 1 <= n <= MAX_N:
        raise RequestError(f"n must be in [1, {MAX_N}]", "n")
    prompt = parse_prompt(engine, body, chat, tools if tool_choice != "none" else [], max_prompt_chars)
    logprobs = parse_logprobs(body, chat)
    base = sampling(body, engine.config.max_model_len, len(prompt), default_max_tokens=1024 if chat else 16,
                    logprobs=logprobs, grammar=grammar)
    # choice i samples with seed + i, wrapping within the seeds torch accepts
    choices = [base if base.seed is None or i == 0 else replace_seed(base, (base.seed + i) % (SEED_MAX + 1))
               for i in range(n)]
    if base.guided and engine.guided is not None:
        try:  # compile here so a bad schema is a 400, not a failed stream
            engine.guided.compile_params(base)
        except ValueError as exc:
            raise RequestError(str(exc), grammar_param) from exc
    return ParsedRequest(chat, prompt, choices, stream, bool((options or {}).get("include_usage")),
                         tool_names=tuple(t["function"]["name"] for t in tools) if tool_choice != "none" else (),
                         logprobs=logprobs)


def replace_seed(params: SamplingParams, seed: int) -> SamplingParams:
    """The same params with another seed: choice i of a seeded request samples with seed + i."""
    return SamplingParams(**{**params.__dict__, "seed": seed})


def integer(body: dict[str, Any], key: str, default: int) -> int:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{key}' must be an integer", key)
    return value


def number(body: dict[str, Any], key: str, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RequestError(f"'{key}' must be a finite number", key)
    return float(value)


def parse_logprobs(body: dict[str, Any], chat: bool) -> int | None:
    """Alternatives per token (0 = the sampled token only), or None when no log-probabilities were asked for."""
    if chat:
        wanted = body.get("logprobs")
        if wanted is not None and not isinstance(wanted, bool):
            raise RequestError("'logprobs' must be a boolean for chat completions", "logprobs")
        top = body.get("top_logprobs")
        if top is not None and not wanted:
            raise RequestError("'top_logprobs' needs 'logprobs': true", "top_logprobs")
        if not wanted:
            return None
        count, key = integer(body, "top_logprobs", 0), "top_logprobs"
    else:
        if body.get("logprobs") is None:
            return None
        count, key = integer(body, "logprobs", 0), "logprobs"
    if not 0 <= count <= MAX_LOGPROBS:
        raise RequestError(f"'{key}' must be in [0, {MAX_LOGPROBS}]", key)
    return count


def sampling(body: dict[str, Any], max_model_len: int, prompt_len: int, default_max_tokens: int,
             logprobs: int | None, grammar: dict[str, Any]) -> SamplingParams:
    """SamplingParams for one choice; max_tokens must fit the context, and defaults to what is left of it."""
    room = max_model_len - prompt_len
    key = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    max_tokens = integer(body, key, min(default_max_tokens, room))
    if max_tokens > room:
        raise RequestError(f"This model's maximum context length is {max_model_len} tokens. However, you requested "
                           f"{prompt_len + max_tokens} tokens ({prompt_len} in the prompt, {max_tokens} in the "
                           f"completion); '{key}' can be at most {room} here.", key)
    stop = body.get("stop") or []
    if isinstance(stop, list) and len(stop) > MAX_STOP:
        raise RequestError(f"'stop' takes at most {MAX_STOP} strings", "stop")
    try:
        return SamplingParams(
            max_tokens=max_tokens, temperature=number(body, "temperature", 1.0), top_p=number(body, "top_p", 1.0),
            top_k=integer(body, "top_k", -1), seed=None if body.get("seed") is None else integer(body, "seed", 0),
            stop=[stop] if isinstance(stop, str) else stop, ignore_eos=bool(body.get("ignore_eos", False)),
            logprobs=logprobs, **grammar)
    except RequestError:
        raise
    except ValueError as exc:  # SamplingParams messages start with the field's name
        name = str(exc).split(" ", 1)[0]
        raise RequestError(str(exc), name if name in SamplingParams.__dataclass_fields__ else None) from exc


def guidance(body: dict[str, Any], tools: list[dict[str, Any]], tool_choice: Any) -> dict[str, Any]:
    """The grammar keyword for SamplingParams: json_schema from response_format, or a structural tag for tools."""
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
    if body.get("json_schema") is not None:
        schema = body["json_schema"]
        if isinstance(schema, str):  # vLLM's extension takes the schema as a JSON string too
            try:
                schema = json.loads(schema)
            except (ValueError, RecursionError) as exc:
                raise RequestError("'json_schema' is a string that is not valid JSON", "json_schema") from exc
    if tool_choice == "none" or (tool_choice == "auto" and not tools):
        return {"json_schema": schema} if schema is not None else {}
    if schema is not None:
        raise RequestError("response_format and tool calls cannot constrain one answer together; use "
                           "tool_choice 'none' or drop response_format", "response_format")
    return {"structural_tag": tool_call_grammar(tools, tool_choice, body.get("parallel_tool_calls", True))}


def tool_call_grammar(tools: list[dict[str, Any]], tool_choice: Any, parallel: Any) -> dict[str, Any]:
    """An xgrammar structural tag: free text where a tool call, once begun, must name an offered tool and
    give arguments valid under its schema. A call takes one of `CALL_FORMS`: `<tool_call>` (the Hermes
    format the chat template asks for), or a bare `{"name": ...}` object, compact or pretty-printed (what
    small Qwen models often write instead)."""
    if not isinstance(parallel, bool):
        raise RequestError("'parallel_tool_calls' must be a boolean", "parallel_tool_calls")

    def tag(fn: dict[str, Any], form: tuple[str, str, str]) -> dict[str, Any]:
        opening, between, end = form
        # one whitespace at most between JSON tokens: a weak model can otherwise emit whitespace until max_tokens
        content = {"type": "json_schema", "json_schema": fn.get("parameters") or {"type": "object"},
                   "max_whitespace_cnt": 1}
        return {"type": "tag", "begin": opening + fn["name"] + between, "content": content, "end": end}

    functions = [t["function"] for t in tools]
    if isinstance(tool_choice, dict):
        named = next(fn for fn in functions if fn["name"] == tool_choice["function"]["name"])
        return {"type": "structural_tag", "format": tag(named, CALL_FORMS[0])}
    return {"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<tool_call>"] + [opening for opening, _, _ in CALL_FORMS[1:]],
        "tags": [tag(fn, form) for fn in functions for form in CALL_FORMS],
        "at_least_one": tool_choice == "required", "stop_after_first": not parallel}}


def parse_tools(engine: LLMEngine, body: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
    """(tools, tool_choice) validated; tool_choice is 'none', 'auto', 'required' or the named-function dict."""
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise RequestError("'tools' must be a list of {type: 'function', function: {...}}", "tools")
    if len(tools) > MAX_TOOLS:
        raise RequestError(f"'tools' may list at most {MAX_TOOLS} functions", "tools")
    names = []
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not TOOL_NAME.match(fn["name"]):
            raise RequestError("each tool must be {type: 'function', function: {name: [a-zA-Z0-9_-]{1,64}, "
                               "parameters: JSON schema}}", "tools")
        if fn.get("parameters") is not None and not isinstance(fn["parameters"], dict):
            raise RequestError(f"tool '{fn['name']}': parameters must be a JSON schema object", "tools")
        names.append(fn["name"])
    choice = body.get("tool_choice") or ("auto" if tools else "none")
    if isinstance(choice, dict):
        function = choice.get("function") if choice.get("type") == "function" else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or name not in names:
            raise RequestError(f"tool_choice names function {name!r}, which is not among the tools {names}",
                               "tool_choice")
    elif not isinstance(choice, str) or choice not in ("none", "auto", "required"):
        raise RequestError("tool_choice must be 'none', 'auto', 'required' or {type: 'function', function: {name}}",
                           "tool_choice")
    if choice != "none" and not tools:
        raise RequestError(f"tool_choice {json.dumps(choice)} needs a non-empty 'tools' list", "tool_choice")
    template = getattr(engine.tokenizer, "chat_template", None) or ""
    if choice != "none" and "<tool_call>" not in template:
        raise RequestError("this model's chat template has no <tool_call> format, so it cannot be asked for tool "
                           "calls; use tool_choice 'none'", "tools")
    return tools, choice


def parse_messages(messages: Any) -> list[dict[str, Any]]:
    """OpenAI chat messages -> what the chat template reads: string content (text parts joined), and an
    assistant's earlier tool calls and the tool results that answered them."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty list of {role, content} objects", "messages")
    out = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise RequestError(f"each message needs a 'role', one of {', '.join(ROLES)}", "messages")
        content = m.get("content")
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
            content = "".join(p for p in parts if isinstance(p, str)) if len(parts) == len(content) else None
        message: dict[str, Any] = {"role": m["role"], "content": content}
        calls = m.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise RequestError("a message's 'tool_calls' must be a list", "messages")
        if m["role"] == "assistant" and calls:
            message["tool_calls"] = [past_tool_call(c) for c in calls]
            message["content"] = content or ""
        elif m["role"] == "tool" and isinstance(m.get("tool_call_id"), str):
            message["tool_call_id"] = m["tool_call_id"]
        if not isinstance(message["content"], str):
            raise RequestError("each message needs a text 'content' (text parts only; images and audio are not "
                               "supported)", "messages")
        out.append(message)
    return out


def past_tool_call(call: Any) -> dict[str, Any]:
    """An earlier assistant tool call in the shape chat templates render (arguments as an object)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str):
        raise RequestError("an assistant tool call needs function.name and function.arguments (a JSON string)",
                           "messages")
    try:
        arguments = json.loads(fn["arguments"])
    except json.JSONDecodeError as exc:
        raise RequestError(f"tool call {fn['name']}: arguments are not JSON ({exc.msg})", "messages") from exc
    return {"id": call.get("id"), "type": "function", "function": {"name": fn["name"], "arguments": arguments}}


def parse_prompt(engine: LLMEngine, body: dict[str, Any], chat: bool, tools: list[dict[str, Any]],
                 max_chars: int | None = None) -> list[int]:
    """Token ids of the request's prompt; a text longer than `max_chars` is refused before tokenizing."""
    limit = engine.config.max_model_len
    param = "messages" if chat else "prompt"
    try:
        if chat:
            messages = parse_messages(body.get("messages"))
            chars = sum(len(m["content"]) for m in messages)
            if max_chars is not None and chars > max_chars:
                raise RequestError(too_long(f"{chars} characters", limit, max_chars), param)
            return check_length(engine.chat_prompt(messages, tools=tools or None), limit, param)
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
            prompt = prompt[0]
        token_ids = isinstance(prompt, list) and bool(prompt) and all(isinstance(t, int) for t in prompt)
        if not (isinstance(prompt, str) and prompt) and not token_ids:
            raise RequestError("'prompt' must be a non-empty string or a list of token ids (one prompt per request)",
                               "prompt")
        given = cast("str | list[int]", prompt)
        if isinstance(given, list):
            check_length(given, limit, param)
        elif max_chars is not None and len(given) > max_chars:
            raise RequestError(too_long(f"{len(given)} characters", limit, max_chars), param)
        return check_length(engine.tokenize(given), limit, param)
    except RequestError:
        raise
    except ValueError as exc:
        raise RequestError(str(exc), param) from exc


def check_length(ids: list[int], max_model_len: int, param: str) -> list[int]:
    if len(ids) >= max_model_len:
        raise RequestError(f"prompt has {len(ids)} tokens; the limit is max_model_len={max_model_len} - 1", param)
    return ids


def too_long(size: str, max_model_len: int, max_chars: int) -> str:
    return (f"prompt has {size}; no text over {max_chars} characters fits in max_model_len={max_model_len} tokens "
            "with this tokenizer, so it was not tokenized")


# -- responses -------------------------------------------------------------------------------------------

def split_tool_calls(text: str, names: list[str]) -> tuple[str | None, list[dict[str, Any]]]:
    """(content outside the calls or None, OpenAI tool_calls): each `<tool_call>{...}</tool_call>` or bare
    `{"name", "arguments"}` object that names an offered tool; a ```json fence around a bare call goes with
    it. A call cut short by max_tokens stays content."""
    decoder = json.JSONDecoder()
    calls, kept, pos = [], [], 0
    for start in CALL_START.finditer(text):
        if start.start() < pos:
            continue
        try:
            call, end = decoder.raw_decode(text, start.end())
        except json.JSONDecodeError:
            continue
        if not (isinstance(call, dict) and call.get("name") in names and isinstance(call.get("arguments", {}), dict)):
            continue
        begin = start.start()
        if start.group():  # the tagged form must be closed
            close = CALL_END.match(text, end)
            if close is None:
                continue
            end = close.end()
        else:
            fence, after = FENCE_OPEN.search(text, pos, begin), FENCE_CLOSE.match(text, end)
            if fence and after:
                begin, end = fence.start(), after.end()
        kept.append(text[pos:begin])
        pos = end
        calls.append({"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                      "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}})
    kept.append(text[pos:])
    content = "".join(kept).strip() if calls else text
    return content or None, calls


class TokenTexts:
    """Each token's own text and bytes, for log-probability entries (cached; the tokenizer needs its lock)."""

    BYTE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")  # SentencePiece byte-fallback pieces

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self.cache: dict[int, tuple[str, list[int]]] = {}
        self.byte_of = {ch: b for b, ch in byte_level_alphabet().items()}

    def __call__(self, token_id: int) -> tuple[str, list[int]]:
        if token_id not in self.cache:
            tok = self.engine.tokenizer
            with self.engine.tokenizer_lock:
                piece = tok.convert_ids_to_tokens(token_id) if tok is not None else None
                decoded = tok.decode([token_id]) if tok is not None else str(token_id)
            if isinstance(piece, str) and piece and all(ch in self.byte_of for ch in piece):
                raw = bytes(self.byte_of[ch] for ch in piece)  # byte-level BPE (GPT-2, Qwen, Llama 3)
            elif isinstance(piece, str) and (m := self.BYTE.match(piece)):
                raw = bytes([int(m.group(1), 16)])
            else:
                raw = decoded.encode()
            self.cache[token_id] = (raw.decode("utf-8", errors="replace"), list(raw))
        return self.cache[token_id]


def byte_level_alphabet() -> dict[int, str]:
    """Byte-level BPE's printable stand-in for each byte (GPT-2's table: printable bytes stand for themselves)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def chat_logprobs(records: list[TokenLogprob], texts: TokenTexts) -> dict[str, Any]:
    def entry(token_id: int, logprob: float) -> dict[str, Any]:
        text, raw = texts(token_id)
        return {"token": text, "logprob": logprob, "bytes": raw}

    return {"content": [{**entry(r.token_id, r.logprob), "top_logprobs": [entry(t, lp) for t, lp in r.top]}
                        for r in records], "refusal": None}


def completion_logprobs(records: list[TokenLogprob], texts: TokenTexts, offset: int = 0) -> dict[str, Any]:
    tokens = [texts(r.token_id)[0] for r in records]
    offsets = []
    for token in tokens:
        offsets.append(offset)
        offset += len(token)
    return {"tokens": tokens, "token_logprobs": [r.logprob for r in records],
            "top_logprobs": [{texts(t)[0]: lp for t, lp in r.top} for r in records], "text_offset": offsets}

"""What one HTTP request may cost the server: body size, time to arrive, grammar size and shape, prompt length.

Used by server.py (body, timeout) and openai_api.py (prompt, grammar) so that a public-facing
server refuses an expensive request cheaply, before it reads, tokenizes or compiles anything large,
instead of spending CPU, memory and shared locks on it. Each limit is a `serve` flag with an
environment default (see `ServerLimits.from_env`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

# xgrammar compiles an object's optional properties in time that grows about with their cube: with the
# default model's vocabulary 200 took 0.8 s, 600 took 8 s, 1000 took 29 s (this machine, xgrammar 0.2.9)
MAX_OPTIONAL_PROPERTIES = 128
# a bounded repetition in a regex pattern is unrolled: "(a|b|c|d){1,2000}" took 6.7 s to compile
MAX_PATTERN_REPEAT = 256
REPEAT = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class ServerLimits:
    """max_body_bytes: a larger request body gets 413 unread. request_timeout_s: a request's line, headers
    and body must all arrive within it, and a kept-alive connection idle that long is closed; it is also
    how long one write to a client that stopped reading may block. max_schema_bytes: the canonical JSON
    of a request's grammar (response_format schema or tools) may be at most this long."""

    max_body_bytes: int = 4 * 1024 * 1024
    request_timeout_s: float = 30.0
    max_schema_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        if self.max_body_bytes < 1 or self.max_schema_bytes < 1 or not self.request_timeout_s > 0:
            raise ValueError("max_body_bytes, max_schema_bytes and request_timeout_s must be positive")

    @classmethod
    def from_env(cls) -> ServerLimits:
        """Defaults overridden by INFRAWIKI_LLM_MAX_BODY_BYTES, INFRAWIKI_LLM_REQUEST_TIMEOUT_S and
        INFRAWIKI_LLM_MAX_SCHEMA_BYTES."""
        return cls(max_body_bytes=int(_env_number("INFRAWIKI_LLM_MAX_BODY_BYTES", cls.max_body_bytes)),
                   request_timeout_s=_env_number("INFRAWIKI_LLM_REQUEST_TIMEOUT_S", cls.request_timeout_s),
                   max_schema_bytes=int(_env_number("INFRAWIKI_LLM_MAX_SCHEMA_BYTES", cls.max_schema_bytes)))


def longest_token_chars(tokenizer: Any) -> int:
    """Most characters of input one token can cover: its longest vocabulary piece (byte-level pieces spell
    one character per byte, and a character is at least one byte). A text longer than max_model_len times
    this has more than max_model_len tokens, so it can be refused without tokenizing it."""
    return max((len(piece) for piece in tokenizer.get_vocab()), default=1) or 1


def check_grammar(spec: Any, max_bytes: int) -> None:
    """ValueError when a JSON schema or structural tag is too large, or has a shape known to compile slowly."""
    size = len(json.dumps(spec, sort_keys=True))
    if size > max_bytes:
        raise ValueError(f"the grammar's JSON is {size} bytes; this server compiles at most {max_bytes}")
    stack = [spec]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        properties = node.get("properties")
        if isinstance(properties, dict):
            required = node.get("required")
            named = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
            optional = set(properties) - named
            if len(optional) > MAX_OPTIONAL_PROPERTIES:
                raise ValueError(f"an object in the schema has {len(optional)} optional properties; this server "
                                 f"compiles at most {MAX_OPTIONAL_PROPERTIES} (list the others in 'required')")
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            counts = [int(n) for m in REPEAT.finditer(pattern) for n in m.groups() if n]
            if any(n > MAX_PATTERN_REPEAT for n in counts):
                raise ValueError(f"pattern {pattern[:80]!r} repeats more than {MAX_PATTERN_REPEAT} times; "
                                 "this server compiles bounded repetitions up to that count")
        stack.extend(node.values())

"""Per-request decoding knobs, validated when a request arrives (the server turns errors into 400s)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

MAX_LOGPROBS = 20  # alternatives per token, as OpenAI's top_logprobs allows
# torch.Generator.manual_seed takes any integer in [-2**63, 2**64 - 1] (negatives wrap modulo 2**64)
SEED_MIN, SEED_MAX = -(2**63), 2**64 - 1
# below this a temperature divides float32 logits into +-inf, and softmax of those is NaN
MIN_TEMPERATURE = 1e-5


@dataclass
class SamplingParams:
    """How to pick tokens for one request and when to stop.

    temperature 0 means greedy. top_k <= 0 and top_p == 1 disable those filters. `seed` makes one
    request's sampling reproducible whatever else is in the batch. `json_schema` (a dict or a JSON
    string) constrains the output to JSON valid under that schema; `structural_tag` (an xgrammar
    structural tag, e.g. free text with schema-checked tool calls) constrains it to that format (see
    guided.py); at most one of the two. `logprobs` = N records each sampled token's log-probability
    under the model and the N most likely alternatives (0: the sampled token's only).
    """

    max_tokens: int = 64
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    json_schema: dict[str, Any] | str | None = None
    structural_tag: dict[str, Any] | None = None
    logprobs: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            self.stop = [self.stop]
        if isinstance(self.stop, tuple):
            self.stop = list(self.stop)
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if (not isinstance(self.temperature, int | float) or not math.isfinite(self.temperature)
                or not (self.temperature == 0 or self.temperature >= MIN_TEMPERATURE)):
            raise ValueError(f"temperature must be 0 (greedy) or a finite number >= {MIN_TEMPERATURE}, "
                             f"got {self.temperature!r}")
        if not isinstance(self.top_p, int | float) or not 0 < self.top_p <= 1:  # NaN fails this comparison too
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if not isinstance(self.top_k, int):
            raise ValueError(f"top_k must be an integer (<= 0 disables it), got {self.top_k!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or not SEED_MIN <= self.seed <= SEED_MAX):
            raise ValueError(f"seed must be an integer in [-2**63, 2**64 - 1], got {self.seed!r}")
        if not isinstance(self.stop, list) or not all(isinstance(s, str) and s for s in self.stop):
            raise ValueError("stop must be a non-empty string or a list of non-empty strings")
        if isinstance(self.json_schema, str):
            try:
                self.json_schema = json.loads(self.json_schema)
            except json.JSONDecodeError as exc:
                raise ValueError(f"json_schema is not valid JSON: {exc}") from exc
        if self.json_schema is not None and not isinstance(self.json_schema, dict | bool):
            raise ValueError("json_schema must be a JSON object (a dict) describing the output")
        if self.structural_tag is not None and (not isinstance(self.structural_tag, dict) or self.json_schema is not None):
            raise ValueError("structural_tag must be a dict, and cannot be combined with json_schema")
        if self.logprobs is not None and (not isinstance(self.logprobs, int) or not 0 <= self.logprobs <= MAX_LOGPROBS):
            raise ValueError(f"logprobs must be an integer in [0, {MAX_LOGPROBS}], got {self.logprobs!r}")

    @property
    def guided(self) -> bool:
        return self.json_schema is not None or self.structural_tag is not None

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

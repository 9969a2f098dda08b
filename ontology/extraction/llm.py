"""The LLM extractor: asks the engine (OpenAI-compatible HTTP API) about trade-off candidates.

Runs inside an extraction after the rule extractors, on the top-N ranked trade-off sentences only
(the CPU budget is ~60 s a paper), sent concurrently (`max_concurrency` at a time) so the engine
batches them. Each answer is
guided by a JSON schema (response_format json_schema), then parsed and validated again here: output
that is not JSON or breaks the schema is rejected with the reason and never becomes a fact.
An unreachable server raises LlmUnavailable so the Celery task can retry later.
"""
from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import requests
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ontology.extraction.facts import new_fact
from ontology.extraction.tradeoffs import TradeOffCandidate
from ontology.vocabulary import parameter_specs

log = logging.getLogger(__name__)
PROMPTS = Path(__file__).resolve().parent.parent / "prompts"


class LlmUnavailable(RuntimeError):
    """The LLM server cannot be reached (or is overloaded): retry later."""


# The longest metric name an answer may give, in the guided-decoding schema and in the check of the reply.
MAX_METRIC_CHARS = 80


class LlmAnswer(BaseModel):
    """What the model must return for one candidate sentence."""

    model_config = ConfigDict(extra="forbid")

    is_trade_off: bool
    parameter: str = Field(min_length=2, max_length=60, pattern=r"^[a-z][a-z0-9_]*$")
    improves: str = Field(min_length=2, max_length=MAX_METRIC_CHARS)
    worsens: str = Field(min_length=2, max_length=MAX_METRIC_CHARS)

    @model_validator(mode="after")
    def _names_two_different_metrics(self) -> LlmAnswer:
        improves, worsens = self.improves.strip().lower(), self.worsens.strip().lower()
        if improves == worsens:
            raise ValueError("improves and worsens name the same thing")
        if self.parameter in {improves.replace(" ", "_"), worsens.replace(" ", "_")}:
            raise ValueError("improves/worsens repeat the parameter instead of naming a metric")
        return self


def knob_names() -> list[str]:
    """Canonical names of the knobs (parameter-kind templates) a trade-off can be about."""
    return sorted(name for name, spec in parameter_specs().items() if spec.kind == "parameter")


@cache
def answer_schema() -> dict:
    """JSON schema for guided decoding: LlmAnswer's own schema, with the parameter narrowed to one
    of the catalogue's knobs.

    One schema for every request, so the server compiles its grammar once and reuses it.
    """
    schema = LlmAnswer.model_json_schema()
    schema["properties"]["parameter"] = {"type": "string", "enum": knob_names()}
    return schema


class LlmClient:
    """Chat completions against an OpenAI-compatible server; counts the tokens it used."""

    def __init__(self, base_url: str, model: str, timeout_s: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "llm_requests": 0}
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise LlmUnavailable unless the server answers /models."""
        try:
            requests.get(f"{self.base_url}/models", timeout=3).raise_for_status()
        except requests.RequestException as exc:
            raise LlmUnavailable(f"LLM server at {self.base_url} is unreachable ({exc.__class__.__name__})") from exc

    def chat(self, prompt: str, schema: dict, max_tokens: int = 96) -> str:
        """The model's reply text for one user prompt, decoded under `schema`."""
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "response_format": {"type": "json_schema", "json_schema": {"name": "trade_off", "schema": schema}},
        }
        try:
            response = requests.post(f"{self.base_url}/chat/completions", json=body, timeout=self.timeout_s)
        except requests.RequestException as exc:
            raise LlmUnavailable(f"LLM server at {self.base_url} failed: {exc.__class__.__name__}") from exc
        if response.status_code >= 500 or response.status_code == 429:
            raise LlmUnavailable(f"LLM server answered {response.status_code}: {response.text[:200]}")
        response.raise_for_status()
        payload = response.json()
        usage = payload.get("usage") or {}
        with self._lock:
            self.usage["prompt_tokens"] += int(usage.get("prompt_tokens", 0))
            self.usage["completion_tokens"] += int(usage.get("completion_tokens", 0))
            self.usage["llm_requests"] += 1
        return payload["choices"][0]["message"]["content"] or ""


def parse_answer(raw: str) -> LlmAnswer:
    """Parse and validate one reply; ValueError says what was wrong (not JSON, which field)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"model output is not valid JSON ({exc.msg} at char {exc.pos})") from None
    try:
        return LlmAnswer.model_validate(data)
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"model output breaks the schema: {fields}") from None


class LlmExtractor:
    """Trade-off facts from the top candidates, one request per sentence, `max_concurrency` in flight
    at once (1 = one request at a time); the engine batches whatever arrives together."""

    def __init__(self, client: LlmClient, prompt_file: Path = PROMPTS / "trade_off.txt",
                 max_concurrency: int = 8) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, not {max_concurrency}")
        self.client = client
        self.template = prompt_file.read_text()
        self.max_concurrency = max_concurrency

    @property
    def usage(self) -> dict:
        return dict(self.client.usage)

    def prompt(self, candidate: TradeOffCandidate, subject: str) -> str:
        return self.template.format(
            subject=subject, page=candidate.sentence.page, sentence=candidate.sentence.quote(),
            hints=", ".join(candidate.parameters) or "none",
        )

    def _one(self, candidate: TradeOffCandidate, subject: str) -> tuple[dict | None, tuple[str, str] | None]:
        raw = self.client.chat(self.prompt(candidate, subject), answer_schema())
        try:
            answer = parse_answer(raw)
        except ValueError as exc:
            log.warning("rejected LLM output for p.%s: %s", candidate.sentence.page, exc)
            return None, (raw, str(exc))
        if not answer.is_trade_off:
            return None, None
        fact = new_fact("trade_off", subject, answer.parameter,
                        effect=f"improves {answer.improves.strip()}; worsens {answer.worsens.strip()}",
                        page=candidate.sentence.page, quote=candidate.sentence.quote(),
                        confidence=0.6 if answer.parameter in candidate.parameters else 0.4, extractor="llm")
        return fact, None

    def extract(self, candidates: list[TradeOffCandidate], subject: str) -> tuple[list[dict], list[tuple[str, str]]]:
        """(facts, rejected outputs); raises LlmUnavailable when the server cannot be reached."""
        if not candidates:
            return [], []
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(candidates))) as pool:
            results = list(pool.map(lambda c: self._one(c, subject), candidates))
        facts = [fact for fact, _ in results if fact]
        rejected = [bad for _, bad in results if bad]
        return facts, rejected


def default_llm_extractor(max_concurrency: int = 8) -> LlmExtractor:
    """The extractor for settings.LLM_URL / LLM_MODEL; raises LlmUnavailable if it does not answer."""
    from django.conf import settings

    client = LlmClient(settings.LLM_URL, settings.LLM_MODEL, settings.LLM_TIMEOUT_S)
    client.check()
    return LlmExtractor(client, max_concurrency=max_concurrency)

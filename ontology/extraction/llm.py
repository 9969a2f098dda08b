"""The LLM extractor: asks the engine (OpenAI-compatible HTTP API) for the facts of a paper's best passages.

Runs inside an extraction after the rule extractors, on at most `max_passages` passages a paper
(ontology.extraction.passages picks them by a generic score; the CPU budget is ~2 minutes a paper on
the 1.5B model), sent concurrently (`max_concurrency` at a time) so the engine batches them. Every
call starts with the same system message (the instructions and few-shot of ontology/prompts), so the
server's prefix cache computes it once for all of them. Each answer is guided by a JSON schema
(response_format json_schema) and parsed and validated again here: output that is not JSON or breaks
the schema is rejected with the reason and never becomes a fact. The facts still have to pass
grounding (pipeline) before they are stored. An unreachable server raises LlmUnavailable so the
Celery task can retry later.
"""
from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import requests
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ontology.extraction.facts import new_fact
from ontology.extraction.naming import Name, name_quantity
from ontology.extraction.passages import Passage, select_passages
from ontology.extraction.text import Document, Sentence, collapse
from ontology.schema import MAX_QUOTE
from ontology.vocabulary import parameters_mentioned, spec_for

log = logging.getLogger(__name__)
PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
INSTRUCTIONS = PROMPTS / "facts.txt"
EXAMPLES = PROMPTS / "facts_examples.jsonl"
MAX_FACTS_PER_PASSAGE = 3
# A quote shorter than this ("windowing", "λ = 4") does not say what the fact is; the guided decoder
# makes the model write a longer span.
MIN_QUOTE_CHARS = 20


class LlmUnavailable(RuntimeError):
    """The LLM server cannot be reached (or is overloaded): retry later."""


class LlmFact(BaseModel):
    """One fact as the model states it (empty strings for fields that do not apply)."""

    model_config = ConfigDict(extra="forbid")

    quote: str = Field(min_length=MIN_QUOTE_CHARS, max_length=MAX_QUOTE)
    kind: Literal["constraint", "parameter", "trade_off"]
    parameter: str = Field(min_length=2, max_length=48, pattern=r"^[a-z][a-z0-9_]*$")
    value: str = Field(max_length=40)
    unit: str = Field(max_length=16)
    condition: str = Field(max_length=100)
    effect: str = Field(max_length=160)
    subject: str = Field(max_length=40)


class LlmAnswer(BaseModel):
    """What the model must return for one passage."""

    model_config = ConfigDict(extra="forbid")

    facts: list[LlmFact] = Field(max_length=MAX_FACTS_PER_PASSAGE)


@cache
def answer_schema() -> dict:
    """JSON schema for guided decoding, LlmAnswer's own; one schema for every request, so the server
    compiles its grammar once and reuses it."""
    return LlmAnswer.model_json_schema()


@dataclass(frozen=True)
class Prompt:
    """The shared system message (instructions + few-shot) and the per-passage user message template."""

    system: str

    @staticmethod
    def user(passage: str, page: int) -> str:
        return f"Passage (page {page}): {passage}"


@cache
def load_prompt(instructions: Path = INSTRUCTIONS, examples: Path = EXAMPLES) -> Prompt:
    """The prompt from its files: the instructions, then each example as a passage and its JSON answer."""
    parts = [instructions.read_text().strip(), "", "Examples:"]
    for line in examples.read_text().splitlines():
        if line.strip():
            example = json.loads(line)
            LlmAnswer.model_validate(example["answer"])  # a broken example would teach a broken format
            parts += [Prompt.user(example["passage"], example["page"]), json.dumps(example["answer"], ensure_ascii=False)]
    return Prompt("\n".join(parts))


class LlmClient:
    """Chat completions against an OpenAI-compatible server; counts the tokens it used."""

    def __init__(self, base_url: str, model: str, timeout_s: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "llm_requests": 0}
        self._lock = threading.Lock()

    def check(self, timeout_s: float = 30.0) -> None:
        """Raise LlmUnavailable unless the server answers /models within `timeout_s` (a CPU server busy
        with other papers' batches can take many seconds to answer even this)."""
        try:
            requests.get(f"{self.base_url}/models", timeout=timeout_s).raise_for_status()
        except requests.RequestException as exc:
            raise LlmUnavailable(f"LLM server at {self.base_url} is unreachable ({exc.__class__.__name__})") from exc

    def chat(self, prompt: str, schema: dict, max_tokens: int = 96, system: str | None = None) -> str:
        """The model's reply text for one user prompt (after `system`, the part every call shares, so the
        server's prefix cache holds it once), decoded under `schema`."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "response_format": {"type": "json_schema", "json_schema": {"name": "facts", "schema": schema}},
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


def parameter_name(stated: str, quote: str) -> Name:
    """The model's parameter name met with the vocabulary: its words as a catalogue name or synonym, else
    the one catalogue knob its quote names, else the nearest catalogue entry by embedding, else the
    model's own snake_case name, recorded as coined (new)."""
    found = name_quantity(stated.replace("_", " "), use_embedding=False)
    if found is not None and found.how == "vocabulary":
        return found
    mentioned = [name for name in parameters_mentioned(quote) if spec_for(name)]
    if len(mentioned) == 1:
        return Name(mentioned[0], "vocabulary")
    return name_quantity(stated.replace("_", " ")) or Name(stated, "coined")


def fact_of(answer: LlmFact, passage: Passage, subject: str, naming: Counter[str]) -> dict:
    """The fact dict for one stated fact: the parameter named through the vocabulary (naming counts how),
    the paper's subject unless the model named one that the passage itself contains."""
    found = parameter_name(answer.parameter, answer.quote)
    parameter = found.parameter
    naming[found.how] += 1
    said = collapse(answer.subject)
    spec = spec_for(parameter)
    # The vocabulary's default kind decides between constraint and parameter (the model mixes them up:
    # a measured speedup is a constraint, a chosen block size a parameter); a trade-off stays one.
    kind = spec.kind if spec is not None and answer.kind != "trade_off" and spec.kind != "trade_off" else answer.kind
    return new_fact(kind, said if said and said.lower() in passage.text.lower() else subject, parameter,
                    value=None if kind == "trade_off" else (collapse(answer.value) or None),
                    unit=collapse(answer.unit) or None, condition=collapse(answer.condition) or None,
                    effect=(collapse(answer.effect) or None) if kind == "trade_off" else None, page=passage.page, quote=collapse(answer.quote),
                    confidence=0.5 if found.how != "coined" else 0.4, extractor="llm")


class LlmExtractor:
    """Facts from a paper's best passages, one request per passage, `max_concurrency` in flight at once
    (1 = one request at a time); the engine batches whatever arrives together."""

    def __init__(self, client: LlmClient, prompt: Prompt | None = None, max_passages: int = 8,
                 max_concurrency: int = 8, max_tokens: int = 320) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, not {max_concurrency}")
        self.client = client
        self.prompt = prompt or load_prompt()
        self.max_passages = max_passages
        self.max_concurrency = max_concurrency
        self.max_tokens = max_tokens
        self.naming: Counter[str] = Counter()

    @property
    def usage(self) -> dict:
        return {**self.client.usage, "llm_naming": dict(self.naming)}

    def _one(self, passage: Passage, subject: str) -> tuple[list[dict], tuple[str, str] | None]:
        raw = self.client.chat(Prompt.user(passage.text, passage.page), answer_schema(), self.max_tokens,
                               system=self.prompt.system)
        try:
            answer = parse_answer(raw)
        except ValueError as exc:
            log.warning("rejected LLM output for p.%s: %s", passage.page, exc)
            return [], (raw, str(exc))
        return [fact_of(stated, passage, subject, self.naming) for stated in answer.facts], None

    def extract_passages(self, passages: list[Passage], subject: str) -> tuple[list[dict], list[tuple[str, str]]]:
        """(facts, rejected outputs) for these passages; raises LlmUnavailable when the server cannot be reached."""
        if not passages:
            return [], []
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(passages))) as pool:
            results = list(pool.map(lambda p: self._one(p, subject), passages))
        facts = [fact for found, _ in results for fact in found]
        rejected = [bad for _, bad in results if bad]
        return facts, rejected

    def extract(self, document: Document, units: list[Sentence], subject: str) -> tuple[list[dict], list[tuple[str, str]]]:
        """(facts, rejected outputs) for the document's best `max_passages` passages."""
        return self.extract_passages(select_passages(document, units, self.max_passages), subject)


def default_llm_extractor(max_concurrency: int = 8, url: str | None = None) -> LlmExtractor:
    """The extractor for `url` (else settings.LLM_URL) and settings.LLM_MODEL; raises LlmUnavailable if it
    does not answer."""
    from django.conf import settings

    client = LlmClient(url or settings.LLM_URL, settings.LLM_MODEL, settings.LLM_TIMEOUT_S)
    client.check()
    return LlmExtractor(client, max_concurrency=max_concurrency)

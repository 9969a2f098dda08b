"""One extraction of one document: sentences -> rule, headline and trade-off extractors (+ LLM)
-> schema validation -> grounding -> merge. Django-free, so `extract_pdf` and the Celery task
share it; storing the result is ontology.services' job.

The LLM extractor runs only when an `LlmExtractor` is passed; its timings, token counts and how many
of its facts grounding dropped come back in `ExtractionResult.stats` so the share of time spent in
the LLM, and what it cost in precision, can be reported.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Protocol

from ontology.extraction.grounding import ground, merge
from ontology.extraction.improvements import extract_improvements, paper_topic_speedup
from ontology.extraction.rules import RULES, apply_rules
from ontology.extraction.statements import STATEMENT_RULES
from ontology.extraction.subjects import paper_subject
from ontology.extraction.text import Document, Sentence, sentences
from ontology.extraction.tradeoffs import rule_trade_offs, trade_off_candidates
from ontology.schema import FactValidationError, validate_fact
from ontology.units import format_number
from ontology.vocabulary import spec_for

log = logging.getLogger(__name__)


class FactExtractor(Protocol):
    """What the pipeline needs from the LLM extractor (ontology.extraction.llm.LlmExtractor)."""

    def extract(self, document: Document, units: list[Sentence], subject: str) -> tuple[list[dict], list[tuple[str, str]]]:
        """(facts, [(raw output, error)] for outputs that were rejected)."""
        ...


@dataclass
class ExtractionResult:
    subject: str
    facts: list[dict]
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (raw output or fact, error)
    stats: dict = field(default_factory=dict)


def validated(facts: list[dict], rejected: list[tuple[str, str]]) -> list[dict]:
    """Facts that pass their template, normalised by it; the others go to `rejected` with the error."""
    good = []
    for fact in facts:
        try:
            model = validate_fact(fact)
        except FactValidationError as exc:
            rejected.append((repr(fact)[:2000], f"{fact.get('extractor', '?')} output: {exc}"))
            continue
        good.append(model.model_dump(exclude_none=False))
    return good


def unclaimed(headlines: list[dict], stated: list[dict]) -> list[dict]:
    """Headline numbers that no statement pattern already named: a percentage the patterns tied to its
    noun phrase ("reduces the KV cache by 93%") is not named again by the nearest metric word."""
    claimed = {(f["page"], f["value"], f["quote"]) for f in stated if f.get("unit") == "%"}
    return [f for f in headlines if (f["page"], f["value"], f["quote"]) not in claimed]


def export_value(fact: dict) -> str | None:
    """The FACTS_FORMAT value: the stated text, or the canonical number when a time was converted to ms."""
    model = validate_fact(fact)
    parsed = model.parsed()
    if parsed.num is None or parsed.low is not None or parsed.items:
        return model.value
    stated = re.search(r"\d[\d,]*(?:\.\d+)?", parsed.raw)
    if parsed.unit == "ms" and stated and abs(float(stated.group().replace(",", "")) - parsed.num) > 1e-9:
        return format_number(parsed.num)
    return model.value


FACT_FIELDS = ("kind", "subject", "parameter", "value", "unit", "condition", "effect", "page", "quote",
               "confidence", "extractor")


def export_facts(facts: list[dict]) -> list[dict]:
    """Facts in the FACTS_FORMAT.md shape (the extract_pdf --json contract)."""
    return [{**{name: fact.get(name) for name in FACT_FIELDS}, "value": export_value(fact)} for fact in facts]


def extract_document(document: Document, llm: FactExtractor | None = None) -> ExtractionResult:
    """All grounded, validated, merged facts of one document (and what was rejected, and timings)."""
    started = time.perf_counter()
    subject = paper_subject(document.title, document.abstract or document.page_texts[0][:3000],
                            " ".join(document.page_texts))
    units = sentences(document.page_texts)
    abstract = document.abstract or document.page_texts[0][:3000]
    raw = apply_rules(units, subject, RULES + STATEMENT_RULES)
    raw += unclaimed(extract_improvements(units, subject, paper_topic_speedup(abstract)), raw)
    candidates = trade_off_candidates(units)
    raw += rule_trade_offs(candidates, subject)
    stats: dict = {"sentences": len(units), "trade_off_candidates": len(candidates), "llm_s": 0.0}
    rejected: list[tuple[str, str]] = []
    if llm is not None:
        llm_started = time.perf_counter()
        llm_facts, llm_rejected = llm.extract(document, units, subject)
        stats["llm_s"] = round(time.perf_counter() - llm_started, 3)
        stats.update(getattr(llm, "usage", {}))
        raw += llm_facts
        rejected += llm_rejected
    good = validated(raw, rejected)
    grounded, dropped = ground(good, document.page_texts)
    for fact, reason in dropped:
        log.info("dropped ungrounded fact %s/%s: %s", fact["parameter"], fact.get("value"), reason)
    facts = merge(grounded)
    facts.sort(key=lambda f: (f["page"], f["kind"], f["parameter"]))
    stats["new_parameters"] = sorted({f["parameter"] for f in facts if spec_for(f["parameter"]) is None})
    stats.update(raw=len(raw), dropped_ungrounded=len(dropped), facts=len(facts),
                 llm_facts_stated=sum(f["extractor"] == "llm" for f in raw),
                 llm_dropped_ungrounded=sum(f["extractor"] == "llm" for f, _ in dropped),
                 total_s=round(time.perf_counter() - started, 3))
    return ExtractionResult(subject=subject, facts=facts, rejected=rejected, stats=stats)

"""Headline numbers: "2-4× higher throughput", "reduces TTFT by up to 88%", "54.7% MFU".

Runs after the rules on every sentence. A multiplier or percentage is named by the nearest metric
words around it (throughput, request rate, goodput, prefill, TTFT, tail latency, cost, MFU...);
a bare "speedup" takes the paper's topic (decoding papers report decoding speedups).
"""
from __future__ import annotations

import re

from ontology.extraction.facts import new_fact
from ontology.extraction.text import Sentence, readable_quote
from ontology.vocabulary import kind_of_name

NUM = r"\d+(?:\.\d+)?"
SEP = r"\s?(?:-|–|—|∼|~|to)\s?"
MULTIPLIER = re.compile(
    rf"(?<![\d.\w])(?P<v>{NUM}\s?×{SEP}{NUM}\s?×|{NUM}{SEP}{NUM}\s?×|{NUM}\s?×|{NUM}x\b|{NUM}\s+times\b|{NUM}-fold\b)"
)
PERCENT = re.compile(rf"(?<![\d.])(?P<v>{NUM}\s?%{SEP}{NUM}\s?%|{NUM}\s?%)")

# (pattern, parameter for ×, parameter for %); the nearest match to the number wins.
METRICS: list[tuple[str, str | None, str | None]] = [
    (r"pre-?fill(?:ing)? (?:throughput|speed-?up)", "prefill_throughput_speedup", None),
    (r"request rates?|more requests|requests? per second|request capacity",
     "request_rate_speedup", "request_capacity_increase_pct"),
    (r"goodput|tighter slo", "goodput_improvement", None),
    (r"throughput|serving capacity", "throughput_speedup", "throughput_increase_pct"),
    (r"inference speed|faster inference|inference latency|speeds? up (?:the )?inference", "inference_speedup", None),
    (r"(?:tail|p9\d|p99|p95) latenc", "tail_latency_reduction", None),
    (r"time to (?:the )?first token|ttft", "ttft_reduction", "ttft_reduction_pct"),
    (r"(?:lower|less|reduc\w*|decreas\w*|shorter|faster|end-to-end) (?:[\w-]+ )?latenc|latenc\w* (?:reduction|speedup|improvement)",
     "inference_speedup", None),
    (r"\bcost", None, "cost_reduction_pct"),
    (r"\bmfu\b|model flops utili[sz]ation", None, "mfu_pct"),
    (r"memory sav|saves? memory|memory reduction", None, "memory_saving_pct"),
    (r"fragmentation", None, "fragmentation_pct"),
    (r"sparsity", None, "activation_sparsity"),
    (r"slo attainment", None, "slo_attainment_pct"),
    (r"kv ?cache[^.]{0,40}reuse|hit rate", None, "kv_cache_reuse_pct"),
    (r"decoding|speedup ratio|wall-?clock", "decoding_speedup", None),
]
_BARE_SPEEDUP = re.compile(r"speed-?ups?|faster|accelerat|improvement", re.IGNORECASE)


def metric_named(words: str) -> str | None:
    """The catalogue percentage metric these words name ("more requests" -> request_capacity_increase_pct)."""
    for pattern, _, pct_name in METRICS:
        if pct_name and re.search(pattern, words):
            return pct_name
    return None


def paper_topic_speedup(abstract: str) -> str:
    """What a bare 'speedup' means in this paper: decoding for decoding papers, else throughput."""
    return "decoding_speedup" if re.search(r"decoding", abstract, re.IGNORECASE) else "throughput_speedup"


def _nearest_metric(sentence: Sentence, start: int, end: int, percent: bool) -> str | None:
    text = sentence.text.lower()
    best: tuple[int, str] | None = None
    for pattern, times_name, pct_name in METRICS:
        name = pct_name if percent else times_name
        if not name:
            continue
        for match in re.finditer(pattern, text):
            distance = start - match.end() if match.end() <= start else match.start() - end
            if distance < 0 or distance > 90:
                continue
            if best is None or distance < best[0]:
                best = (distance, name)
    return best[1] if best else None


def extract_improvements(sentences: list[Sentence], subject: str, bare_speedup: str) -> list[dict]:
    """Multipliers and percentages named by the metric words next to them."""
    facts: list[dict] = []
    seen: set[tuple[str, str, int]] = set()
    for sentence in sentences:
        for regex, percent in ((MULTIPLIER, False), (PERCENT, True)):
            for match in regex.finditer(sentence.text):
                parameter = _nearest_metric(sentence, match.start(), match.end(), percent)
                near = sentence.text[max(0, match.start() - 60) : match.end() + 60]
                if parameter is None and not percent and _BARE_SPEEDUP.search(near):
                    parameter = bare_speedup
                if parameter is None:
                    continue
                value = match.group("v").strip()
                value = value.removesuffix(" times").removesuffix("-fold")
                key = (parameter, value, sentence.page)
                if key in seen:
                    continue
                seen.add(key)
                quote = readable_quote(sentence, match.start(), match.end())
                if quote is None:
                    continue
                facts.append(new_fact(kind_of_name(parameter) or "constraint", subject, parameter, value=value,
                                      unit="%" if percent else "x", page=sentence.page,
                                      quote=quote, confidence=0.65,
                                      extractor="rules"))
    return facts

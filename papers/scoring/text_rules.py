"""Rules that read the paper's own text (abstract and sections) for signs of realistic experiments.

Used by papers.scoring.rules for the "experimental realism" sub-score and two screening questions.
Each detector returns the matches with a short quote and where it is, so every point a paper gets
(or misses) can be checked against the PDF.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ontology.selectors import gpu_vocabulary
from papers.scoring.inputs import TextPart

# Named public or production request traces and datasets used to drive serving experiments.
# Letter-only boundaries: dataset names appear as "openchat_sharegpt4" or "arxiv_summarization".
REAL_TRACE = re.compile(
    r"(?<![A-Za-z])(ShareGPT|Alpaca|LMSYS(?:-Chat(?:-1M)?)?|BurstGPT|Azure (?:LLM )?(?:inference |function |conversation |code )?traces?|"
    r"Mooncake traces?|Splitwise traces?|arXiv[-_ ]?Summ(?:ari[sz]ation)?|HumanEval|LongBench|WildChat|"
    r"production traces?|real[- ]world (?:traces?|workloads?|requests|datasets?)|conversation traces?)(?![A-Za-z])",
    re.IGNORECASE,
)
SYNTHETIC = re.compile(
    r"\b(synthetic (?:workloads?|datasets?|requests?|traces?|inputs?|prompts?|data)|"
    r"randomly generated (?:requests?|prompts?|inputs?|tokens?)|random (?:prompts?|inputs?|tokens)|"
    r"dummy (?:inputs?|prompts?|requests?))\b",
    re.IGNORECASE,
)
# GPUs from the one vocabulary (ontology/data/gpus.json); the other accelerators papers evaluate on after them.
HARDWARE = re.compile(
    rf"\b({gpu_vocabulary().pattern(with_brand=True)}|"
    r"TPU ?v\d\w?|Gaudi ?\d?|Apple M[1-4](?: Max| Pro| Ultra)?|M[1-4] (?:Max|Pro|Ultra))\b"
)
END_TO_END = re.compile(
    r"\b(TTFT|TPOT|TBT|time[- ]to[- ]first[- ]token|time (?:per|between) (?:output )?tokens?|end-to-end latency|"
    r"normali[sz]ed latency|queu(?:e|ing|eing) (?:delay|time|latency)|goodput|SLO attainment|"
    r"P(?:50|90|95|99) (?:latency|TTFT|TPOT)|tail latency|(?:prefill|decode|decoding) latency|"
    r"request (?:rate|throughput)|requests per second)\b",
    re.IGNORECASE,
)
# Words of serving and inference: their share of the title and abstract says what a paper is about.
SERVING_VOCABULARY = re.compile(
    r"\b(serv(?:e|es|ed|er|ers|ing)|inference|latenc(?:y|ies)|throughput|decod(?:e|es|ed|ing)|"
    r"(?:KV|key[- ]value)(?: \(KV\))?[- ]?cach(?:e|es|ing)|prefill(?:ing)?|batch(?:es|ed|ing)?|requests?|SLOs?|goodput|"
    r"deploy(?:s|ed|ing|ment)?|tokens? per second|generation|speed-?ups?)\b",
    re.IGNORECASE,
)
# A title that names the act of serving or running a model (not training it).
SERVING_TITLE = re.compile(
    r"\b(serv(?:e|es|ed|er|ers|ing)|inference|decod(?:e|es|ed|ing)|(?:KV|key[- ]value)[- ]?cach(?:e|es|ing)|"
    r"generation|latency|throughput|long[- ]context)\b", re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
KERNEL_ONLY = re.compile(r"\b(kernel (?:time|latency|execution time|runtime)|micro-?benchmarks?)\b", re.IGNORECASE)

SNIPPET_CHARS = 90


@dataclass(frozen=True)
class Match:
    term: str
    where: str
    quote: str

    def __str__(self) -> str:
        return f'{self.where}: "{self.quote}"'


REFERENCES = re.compile(r"^\s*(?:\d+\.?\s*)?(?:References|Bibliography)\s*$", re.IGNORECASE | re.MULTILINE)


def body_parts(parts: tuple[TextPart, ...]) -> list[TextPart]:
    """The parts before the reference list: cited titles ("...goodput-optimized serving") are not evidence."""
    body: list[TextPart] = []
    for part in parts:
        if REFERENCES.fullmatch(part.where.lstrip("§").strip()):
            break
        heading = REFERENCES.search(part.text)
        if heading:
            body.append(TextPart(part.where, part.text[: heading.start()], part.page))
            break
        body.append(part)
    return body


def find(pattern: re.Pattern[str], parts: tuple[TextPart, ...], limit: int = 3) -> list[Match]:
    """The first match of each distinct term (case-folded) in the body, up to `limit`, with a quote around it."""
    seen: set[str] = set()
    found: list[Match] = []
    for part in body_parts(parts):
        text = " ".join(part.text.split())
        for hit in pattern.finditer(text):
            term = hit.group(1)
            if term.lower() in seen:
                continue
            seen.add(term.lower())
            start, end = max(0, hit.start() - SNIPPET_CHARS // 2), min(len(text), hit.end() + SNIPPET_CHARS // 2)
            found.append(Match(term, part.label, text[start:end].strip()))
            if len(found) >= limit:
                return found
    return found


def vocabulary_share(pattern: re.Pattern[str], text: str) -> tuple[int, int]:
    """(matches of `pattern`, words) in `text`."""
    return len(pattern.findall(text)), len(_WORDS.findall(text))


def has_body_text(parts: tuple[TextPart, ...], minimum_chars: int = 2000) -> bool:
    """Whether enough of the paper was read to answer "no" (rather than "unknown") when nothing matched."""
    return sum(len(part.text) for part in parts) >= minimum_chars

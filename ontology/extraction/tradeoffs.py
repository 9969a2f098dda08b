"""Trade-off candidates: sentences that say a knob helps one thing and costs another.

Runs on every sentence. A candidate has comparative language ("at the cost of", "trade-off",
"but", "however", "overhead", "too large") and, ideally, names a knob from the parameter
catalogue. Candidates are ranked; the rule extractor turns those naming a knob into trade-off
facts, and the LLM extractor gets the top-N to name the knob and say what improves and worsens.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ontology.extraction.facts import new_fact
from ontology.extraction.text import Sentence
from ontology.vocabulary import parameters_mentioned, spec_for

_PRONOUN_START = re.compile(r"^(?:It|This|These|They|Such|Doing so|However, (?:it|this))\b")


def knobs_mentioned(text: str) -> list[str]:
    """Knob-kind parameters named in the text (metrics such as fragmentation_pct are not knobs)."""
    return [name for name in parameters_mentioned(text) if (spec := spec_for(name)) and spec.kind == "parameter"]


# A knob the catalogue does not know, named by its noun phrase: "tile sizes", "the expert capacity factor".
_KNOB_PHRASE = re.compile(
    r"(?<![\w-])(?:(?:[a-z][a-z0-9-]*)\s+){0,2}?(?:size|degree|budget|threshold|ratio|window|interval|rank|"
    r"granularity|factor|width|depth|stride)s?\b")  # lengths are the workload's, not knobs
_NOT_A_KNOB_WORD = re.compile(r"\b(?:the|a|an|of|in|on|for|to|with|by|and|or|but|is|are|this|that|its|their|our|"
                              r"large|larger|small|smaller|high|higher|low|lower|more|less|same|different|limited|"
                              r"fixed|given|each|every|any|such|compression|speedup|signal|noise|varying|variable|"
                              r"consistent|average|total|overall|target|two|three|several|many|overhead|memory|"
                              r"[a-z]|\w*\d\w*)\b")


# A count that is turned up or down ("increasing the number of nano-batches", "as we scaled the number of
# clients"): the knob is num_<what is counted>, the way annotators name counts.
_VARIED_COUNT = re.compile(r"\b(?:increas|decreas|reduc|rais|lower|scal|grow|vary|varie|chang|larger|smaller|higher|more|"
                           r"fewer)\w*\s+(?:up\s+|down\s+)?(?:in\s+)?(?:the\s+)?number of\s+(?P<what>[a-z][a-z-]*s)\b",
                           re.IGNORECASE)


def knob_phrases(text: str) -> list[str]:
    """Parameter names coined from knob-like noun phrases in the text (outside the catalogue)."""
    from ontology.extraction.naming import name_quantity

    names: list[str] = []
    for match in _VARIED_COUNT.finditer(text):
        counted = name_quantity(f"num {match.group('what')}", use_embedding=False)
        if counted and counted.parameter not in names:
            names.append(counted.parameter)
    for match in _KNOB_PHRASE.finditer(text):
        words = match.group().split()
        while words and _NOT_A_KNOB_WORD.fullmatch(words[0]):
            words = words[1:]
        if len(words) < 2 or any(_NOT_A_KNOB_WORD.fullmatch(word) for word in words):
            continue  # a bare "size" or "ratio" names no knob
        words[-1] = words[-1].removesuffix("s") if words[-1].endswith(("sizes", "lengths", "ratios", "windows",
                                                                          "ranks", "factors", "widths", "strides",
                                                                          "thresholds", "budgets", "intervals")) else words[-1]
        name = name_quantity(" ".join(words), use_embedding=False)
        if name and name.parameter not in names and (spec_for(name.parameter) is None or
                                                      spec_for(name.parameter).kind == "parameter"):
            names.append(name.parameter)
    return names

STRONG_CUES = re.compile(
    r"at the (?:cost|expense) of|trade-? ?offs?|sacrific|in exchange for|comes? with (?:a|its own)|"
    r"too (?:small|large|big|many|few)|at the price of|penalt|downside|drawback|overhead|degrad|"
    r"hurts?\b|harms?\b|underutiliz|under-utiliz|interference|inefficien|bottleneck|contention|"
    r"more efficient when|opposite effect|but (?:also|it|this|at)|whereas|on the other hand|in contrast|"
    r"expensive|costly|\bworse\b|spike|paying|(?:higher|increased|extra|additional) (?:[\w-]+ ){0,3}"
    r"(?:latency|overhead|cost|memory)",
    re.IGNORECASE,
)
WEAK_CUES = re.compile(
    r"\bbut\b|\bhowever\b|\bwhile\b|\balthough\b|\byet\b|\bdespite\b|\breduces?\b|\bincreases?\b|"
    r"\bdecreases?\b|\bimproves?\b|\blower\b|\bhigher\b|\blarger\b|\bsmaller\b|\bslower\b|\bfaster\b",
    re.IGNORECASE,
)
METRIC_WORDS = re.compile(
    r"latency|throughput|memory|utili[sz]ation|fragmentation|bandwidth|accuracy|speedup|efficien|"
    r"ttft|tpot|tbt|slo|cost|overhead|performance|capacity|fairness|mfu|utili[sz]|communication|bubbles?|stalls?|"
    r"imbalance|idle",
    re.IGNORECASE,
)


@dataclass
class TradeOffCandidate:
    """A sentence that may state a trade-off, with the knobs it names and its rank score."""

    sentence: Sentence
    parameters: list[str]
    score: float


def trade_off_candidates(sentences: list[Sentence]) -> list[TradeOffCandidate]:
    """Ranked candidates (best first): comparative language about metrics, naming a knob if possible."""
    found: list[TradeOffCandidate] = []
    previous: Sentence | None = None
    for sentence in sentences:
        text, before, previous = sentence.text, previous, sentence
        if len(text) > 600 or len(text) < 30:
            continue
        strong = len(STRONG_CUES.findall(text))
        weak = len(WEAK_CUES.findall(text))
        metrics = len(set(m.lower() for m in METRIC_WORDS.findall(text)))
        explicit = re.search(r"trade-? ?off", text, re.IGNORECASE)
        if not explicit and strong == 0 and weak == 0:
            continue
        parameters = knobs_mentioned(text)
        if not explicit and metrics == 0 and not (strong and parameters):
            continue  # a knob with a cost word ("a bottleneck that limits the batch size") needs no metric word
        if not parameters and before is not None and before.page == sentence.page and _PRONOUN_START.match(text):
            parameters = knobs_mentioned(before.text)  # "It reduces latency but ..." continues the last sentence
        if not parameters:
            parameters = knob_phrases(text)
        if strong == 0 and weak < 2 and not parameters:
            continue
        # a count turned up or down is the knob of the statement even without a comparative cue
        varied = 1.0 if parameters and _VARIED_COUNT.search(text) else 0.0
        score = 2.0 * strong + 0.5 * min(weak, 4) + 0.5 * min(metrics, 3) + (1.5 if parameters else 0.0) + varied
        found.append(TradeOffCandidate(sentence, parameters, score))
    found.sort(key=lambda c: -c.score)
    return found


def rule_trade_offs(candidates: list[TradeOffCandidate], subject: str, max_parameters: int = 3) -> list[dict]:
    """Trade-off facts for candidates that name a knob; the sentence itself is the effect."""
    facts: list[dict] = []
    for candidate in candidates:
        if not candidate.parameters or candidate.score < 3.0:
            continue
        quote = candidate.sentence.quote()
        for parameter in candidate.parameters[:max_parameters]:
            facts.append(new_fact("trade_off", subject, parameter, effect=candidate.sentence.text[:600],
                                  page=candidate.sentence.page, quote=quote,
                                  confidence=min(0.3 + 0.05 * candidate.score, 0.6), extractor="rules"))
    return facts

"""Every pattern matcher that reads user input finishes in time on long adversarial strings.

A regular expression with nested or overlapping repetition can take time quadratic (or worse) in
its input: 20,000 digits once took 17 s in the GPU-name tokenizer. Each matcher below gets strings
built to provoke that (long runs of digits, separators, near-miss prefixes); each call must end
within a fixed budget, and where a call takes measurable time, quadrupling the input must not cost
much more than four times as long (a quadratic matcher costs sixteen).
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pytest

N = 10_000  # long enough for a quadratic matcher to stand out; 20,000 digits took 17 s before
BUDGET_S = 2.0  # CPU seconds per call at N characters; linear matchers take milliseconds
GROWTH = 10.0  # t(N) / t(N/4): linear ~4, quadratic ~16

PIECES = ["1", "1.", "1,", "1-", "1 ", "1e", "1x", "1k", "a", "a ", "A100 ", "H100-", "RTX 40", "x", "\\", " ",
          "arXiv:", "arxiv.org/abs/", "github.com/", "github.com/a/", "https://", "v1", "0.", ". ", "(", "-",
          "≥", "1 GB ", "ms ", "%", "e-", "12.1.", "sm", "a/", "2309.", "astro-ph/", "Llama-", "7B", "--", "=1 ",
          "1B, ", "1e1", "a(", "1 ms ", "x 1 ", "1x1 "]


def _strings(length: int) -> list[str]:
    texts = [(piece * (length // len(piece) + 1))[:length] for piece in PIECES]
    texts += [(piece * (length // len(piece) + 1))[: length - 1] + "!" for piece in ("1", "a ", "1.")]  # near misses
    return texts


def _matchers() -> dict[str, Callable[[str], object]]:
    from advisor.catalog import resolve_gpu
    from advisor.model_specs import resolve_model
    from advisor.versions import vkey
    from infrawiki.throttling import Rate
    from ontology.extraction.improvements import extract_improvements, paper_topic_speedup
    from ontology.extraction.rules import apply_rules
    from ontology.extraction.subjects import paper_subject
    from ontology.extraction.text import sentences
    from ontology.extraction.tradeoffs import knobs_mentioned, trade_off_candidates
    from ontology.gpus import vocabulary
    from ontology.techniques import techniques_in_text
    from ontology.units import canonical_unit, check_finite, parse_value
    from ontology.vocabulary import canonical_parameter, parameters_in_question, parameters_mentioned
    from papers import arxiv_ids
    from papers.clients.download import connect_target
    from papers.links import arxiv_ids as arxiv_ids_in_text
    from papers.links import github_repos
    from papers.pdf.environment import find_environment
    from papers.scoring.topics import topics_for

    return {
        "gpu names (vocabulary find)": vocabulary().find,
        "gpu names (vocabulary canonical)": vocabulary().canonical,
        "gpu names (advisor resolve_gpu)": resolve_gpu,
        "model ids (advisor resolve_model)": resolve_model,
        "versions (advisor vkey)": vkey,
        "units (parse_value)": parse_value,
        "units (canonical_unit)": canonical_unit,
        "units (check_finite)": check_finite,
        "parameter names": canonical_parameter,
        "parameters in a sentence": parameters_mentioned,
        "search query understanding (parameters_in_question)": parameters_in_question,
        "techniques in text": techniques_in_text,
        "arXiv ids (parse)": arxiv_ids.parse,
        "arXiv ids in text": arxiv_ids_in_text,
        "GitHub links in text": github_repos,
        "download URLs": connect_target,
        "rate strings": Rate.parse,
        "topics": lambda text: topics_for(text, text),
        "paper subject": lambda text: paper_subject(text[:300], text),
        "sentences + extraction rules": lambda text: apply_rules(sentences([text]), "System"),
        "trade-off patterns": lambda text: (knobs_mentioned(text), trade_off_candidates(sentences([text]))),
        "improvement patterns": lambda text: (paper_topic_speedup(text),
                                              extract_improvements(sentences([text]), "System", "")),
        "environment in PDF text": lambda text: find_environment([text]),
    }


def _timed(matcher: Callable[[str], object], text: str) -> float:
    """CPU seconds of one call (not wall time: the machine may be busy with other work)."""
    start = time.process_time()
    with contextlib.suppress(Exception):  # refusing the input is a fine answer; only the time matters here
        matcher(text)
    return time.process_time() - start


MATCHERS = _matchers()


@pytest.mark.parametrize("name", MATCHERS)
def test_a_matcher_is_linear_on_long_adversarial_strings(name):
    matcher = MATCHERS[name]
    _timed(matcher, "warm-up: 8 GB at batch size 16")  # a first call may build caches (vocabulary, compiled patterns)
    slow = []
    for long_text, short_text in zip(_strings(N), _strings(N // 4), strict=True):
        elapsed = _timed(matcher, long_text)
        if elapsed > BUDGET_S:
            slow.append(f"{long_text[:12]!r}…: {elapsed:.2f} s")
        elif elapsed > 0.2:
            short = max(_timed(matcher, short_text), 1e-3)
            if elapsed / short > GROWTH:
                slow.append(f"{long_text[:12]!r}…: {elapsed:.2f} s at {N}, {short:.3f} s at {N // 4}")
    assert not slow, f"{name} is super-linear on: " + "; ".join(slow)

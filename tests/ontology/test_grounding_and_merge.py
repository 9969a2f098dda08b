"""Only facts whose quote is on a page and whose value is in the quote survive; duplicates merge."""
from __future__ import annotations

from ontology.extraction.grounding import ground, merge

PAGES = ["Intro text about serving.", "We set the block size to 16 tokens. Larger blocks waste memory but cut kernel launches."]


def fact(**change):
    base = {"kind": "parameter", "subject": "X", "parameter": "block_size", "value": "16", "unit": "tokens",
            "condition": None, "effect": None, "page": 2, "quote": "We set the block size to 16 tokens.",
            "confidence": 0.8, "extractor": "rules"}
    return {**base, **change}


def test_a_quote_found_on_its_page_with_its_value_is_kept():
    kept, dropped = ground([fact()], PAGES)
    assert len(kept) == 1 and not dropped


def test_a_quote_not_in_the_pdf_is_dropped_with_the_reason():
    kept, dropped = ground([fact(quote="We set the block size to 32 tokens.")], PAGES)
    assert not kept
    assert dropped[0][1] == "quote is not in the PDF text"


def test_a_value_not_in_its_quote_is_dropped():
    kept, dropped = ground([fact(value="32")], PAGES)
    assert not kept and "not in the quote" in dropped[0][1]


def test_quotes_match_across_whitespace_and_case_and_the_page_is_corrected():
    kept, _ = ground([fact(quote="we SET the block\n size to 16 tokens.", page=1)], PAGES)
    assert kept[0]["page"] == 2


def test_a_number_written_differently_in_the_quote_still_grounds():
    kept, _ = ground([fact(value="16.0")], PAGES)
    assert len(kept) == 1


def test_the_same_fact_from_two_extractors_merges_keeping_both_names_and_the_llm_effect():
    rules = fact(kind="trade_off", value=None, effect="Larger blocks waste memory but cut kernel launches.",
                 quote="Larger blocks waste memory but cut kernel launches.", confidence=0.5)
    llm = {**rules, "extractor": "llm", "effect": "improves kernel efficiency; worsens memory waste", "confidence": 0.6}
    merged = merge([rules, llm])
    assert len(merged) == 1
    assert merged[0]["extractor"] == "llm+rules"
    assert merged[0]["effect"] == "improves kernel efficiency; worsens memory waste"
    assert merged[0]["confidence"] > 0.6


def test_different_values_do_not_merge():
    assert len(merge([fact(), fact(value="32", quote="32")])) == 2

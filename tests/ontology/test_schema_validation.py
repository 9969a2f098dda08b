"""Extractor output and human edits pass the typed templates before storage; errors name the field."""
from __future__ import annotations

import pytest

from ontology.extraction.text import sentences
from ontology.schema import MAX_QUOTE, FactValidationError, validate_fact

GOOD = {"kind": "parameter", "subject": "vLLM", "parameter": "page size", "value": "16", "unit": "token",
        "page": 12, "quote": "vLLM sets its default block size as 16", "confidence": 0.8, "extractor": "rules"}


def test_a_valid_fact_is_canonicalised():
    fact = validate_fact(GOOD)
    assert (fact.parameter, fact.unit) == ("block_size", "tokens")
    assert fact.parsed().num == 16


def test_seconds_on_a_millisecond_parameter_are_converted():
    fact = validate_fact({**GOOD, "parameter": "ttft_slo", "value": "0.2s", "unit": None})
    assert fact.parameter == "slo_ttft_ms"
    assert fact.parsed().num == pytest.approx(200.0)


@pytest.mark.parametrize(("value", "unit", "stored", "canonical"), [
    ("0.5", "s", "0.5 s", 500.0),          # a bare number in seconds on a name outside the catalogue
    ("2", "minutes", "2 minutes", 120_000.0),
    ("8", "GiB", "8 GiB", 8 * 1.073741824),
    ("0.5", "ms", "0.5", 0.5),             # the canonical unit itself: nothing to keep
    ("0.5 s", "ms", "0.5 s", 500.0),       # a value stating its own unit keeps it
])
def test_a_number_given_with_a_unit_that_scales_keeps_its_meaning(value, unit, stored, canonical):
    fact = validate_fact({**GOOD, "parameter": "prefetch_timeout", "value": value, "unit": unit})
    assert fact.value == stored
    assert fact.parsed().num == pytest.approx(canonical)


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"value": "fast"}, "value", "is not a number for block_size"),
    ({"value": None}, "value", "needs the value"),
    ({"unit": "parsecs"}, "unit", "unknown unit"),
    ({"page": 0}, "page", "greater than or equal to 1"),
    ({"confidence": 1.5}, "confidence", "less than or equal to 1"),
    ({"quote": ""}, "quote", "at least 3 characters"),
    ({"quote": "x" * (MAX_QUOTE + 1)}, "quote", f"at most {MAX_QUOTE} characters"),
    ({"parameter": "cuda", "value": "recent"}, "value", "not a version"),
    ({"colour": "red"}, "colour", "Extra inputs are not permitted"),
    ({"value": ["16"]}, "value", "must be a number or a short string"),
])
def test_a_broken_field_is_named_in_the_error(change, field, message):
    with pytest.raises(FactValidationError) as info:
        validate_fact({**GOOD, **change})
    fields = [name for name, _ in info.value.errors]
    assert field in fields, info.value
    assert message in str(info.value)


def test_a_trade_off_needs_an_effect():
    with pytest.raises(FactValidationError, match="effect: a trade-off needs"):
        validate_fact({**GOOD, "kind": "trade_off", "value": None})


def test_an_unknown_kind_is_refused():
    with pytest.raises(FactValidationError, match="kind: 'rumour' is not one of"):
        validate_fact({**GOOD, "kind": "rumour"})


@pytest.mark.parametrize("value", ["1e309", "2E400 tokens", float("inf"), float("nan"), "1" + "0" * 400 + "e9999"])
def test_a_value_that_is_not_a_finite_number_is_refused_not_read_as_a_range(value):
    with pytest.raises(FactValidationError) as info:
        validate_fact({**GOOD, "value": value})
    assert "finite number" in str(info.value)


def test_exponent_notation_is_one_number():
    from ontology.units import parse_value

    parsed = parse_value("1e-5")
    assert parsed.num == pytest.approx(1e-5) and parsed.low is None and parsed.items == []
    assert parse_value("1e309").num is None and parse_value("1e309").low is None


def test_one_quote_limit_of_300_characters_holds_for_extraction_and_storage():
    assert MAX_QUOTE == 300
    long_sentence = "The scheduler " + "keeps every block resident " * 30 + "."
    quote = sentences([long_sentence])[0].quote()
    assert len(quote) == MAX_QUOTE
    assert validate_fact({**GOOD, "quote": quote}).quote == quote

"""Parameter names and stated values become canonical names, numbers and units."""
from __future__ import annotations

import pytest

from ontology.units import UnitError, canonical_unit, parse_value
from ontology.vocabulary import canonical_parameter, parameters_mentioned


@pytest.mark.parametrize(("name", "canonical"), [
    ("page-size", "block_size"),
    ("Tokens per block", "block_size"),
    ("TP", "tensor_parallel_size"),
    ("max_num_seqs", "max_batch_size"),
    ("max_model_len", "max_seq_len"),
    ("some new knob", "some_new_knob"),
])
def test_synonyms_map_to_one_canonical_name(name, canonical):
    assert canonical_parameter(name) == canonical


def test_seconds_become_milliseconds():
    assert parse_value("0.2s").num == pytest.approx(200.0)
    assert parse_value("6 seconds").unit == "ms"
    assert parse_value("100ms").num == 100.0


def test_k_suffix_on_tokens_is_a_power_of_two_and_on_other_units_a_thousand():
    assert parse_value("2K", "tokens").num == 2048
    assert parse_value("128K", "tokens").num == 131072
    assert parse_value("2K", "requests").num == 2000


def test_ranges_lists_and_bounds_are_kept_apart():
    span = parse_value("2-4×")
    assert (span.low, span.high, span.unit) == (2.0, 4.0, "x")
    assert parse_value("1.7×–2.7×").high == pytest.approx(2.7)
    listed = parse_value("13B, 66B, and 175B")
    assert listed.items == [13.0, 66.0, 175.0] and listed.unit == "B params"
    bound = parse_value("≥ 1000", "tokens")
    assert (bound.bound, bound.num) == (">=", 1000.0)


def test_thousands_separators_and_gib():
    assert parse_value("2,000", "adapters").num == 2000
    assert parse_value("40 GiB").num == pytest.approx(42.95, rel=1e-3)
    assert parse_value("40GB").unit == "GB"


def test_unknown_unit_is_refused_with_the_allowed_list():
    with pytest.raises(UnitError, match="unknown unit 'parsecs'.*tokens"):
        canonical_unit("parsecs")


def test_text_values_have_no_number():
    assert parse_value("prefill-first").num is None


def test_knobs_named_in_a_sentence_are_found_by_phrase():
    found = parameters_mentioned("If the block size is too large, internal fragmentation increases.")
    assert found[0] == "block_size"
    assert "tensor_parallel_size" in parameters_mentioned("Adopting TP across nodes costs bandwidth.")
    assert "tensor_parallel_size" not in parameters_mentioned("the tp of the model")  # the abbreviation is capitals only

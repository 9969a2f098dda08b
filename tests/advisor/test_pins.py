"""advisor.pins: a package outside the range a message states is moved into it."""
from __future__ import annotations

import pytest

from advisor import pins
from advisor.diagnose import diagnose
from advisor.error_text import recognise


def _moves(text: str) -> list[tuple[str, str | None]]:
    return [(a["direction"], a["value"]) for a in pins.actions(text, recognise(text))]


def test_a_release_above_a_required_range_is_moved_back_or_its_dependent_upgraded():
    # transformers' require_version, as LlamaFactory raises it (LlamaFactory issue 6047)
    text = ("ImportError: vllm>=0.4.3,<=0.6.2 is required for a normal functioning of this module, but found "
            "vllm==0.6.3.")
    assert _moves(text) == [("downgrade", "0.6.2"), ("upgrade", None)]
    down, up = pins.actions(text, recognise(text))
    assert down["target"] == "vllm" and up["target"] == "the package that requires vllm"


def test_a_release_below_a_required_minimum_is_upgraded_to_it():
    text = ("ImportError: tokenizers>=0.14,<0.19 is required for a normal functioning of this module, but found "
            "tokenizers==0.13.3.")
    assert _moves(text) == [("upgrade", "0.14")]


@pytest.mark.parametrize("text", [
    # SGLang's assert_pkg_version, both sentences (flashinfer issue 794; sglang issue 6160's title)
    "Exception: flashinfer with minimum required version 0.1.6 is not installed. Please uninstall the old version",
    "flashinfer is installed with version 0.1.5, which is less than the minimum required version 0.1.6. Please",
])
def test_sglangs_minimum_version_check_upgrades_to_the_minimum(text: str):
    assert _moves(text) == [("upgrade", "0.1.6")]


@pytest.mark.parametrize("text", [
    "torch>=2.1 is required for a normal functioning of this module, but found torch==2.3.0.",  # inside the range
    "RuntimeError: CUDA error: an illegal memory access was encountered",
])
def test_no_range_broken_no_move(text: str):
    assert _moves(text) == []


@pytest.mark.django_db
def test_diagnose_answers_a_broken_range_first_for_the_engine_it_names():
    result = diagnose("ImportError: vllm>=0.4.3,<=0.6.2 is required for a normal functioning of this module, but "
                      "found vllm==0.6.3.")
    first = result["findings"][0]
    assert first["kind"] == "pin"
    assert (first["actions"][0]["engine"], first["actions"][0]["direction"]) == ("vllm", "downgrade")


def test_sglangs_own_minimum_check_is_read_as_sglangs_dependency_when_no_engine_is_named():
    text = "Exception: flashinfer with minimum required version 0.1.6 is not installed."
    (act,) = pins.actions(text, recognise(text))
    assert (act["engine"], act["direction"], act["value"], act["target"]) == ("sglang", "upgrade", "0.1.6", "flashinfer")

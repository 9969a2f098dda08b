"""json_schema-guided decoding: even a random-weight model can only emit JSON valid under the schema."""

from __future__ import annotations

import json

import pytest

from inference import SamplingParams

FACT_SCHEMA = {
    "type": "object",
    "properties": {
        "parameter": {"type": "string", "maxLength": 20},
        "unit": {"enum": ["tokens", "GiB", "ms"]},
        "value": {"type": "integer"},  # last: a random model may write digits until max_tokens
    },
    "required": ["parameter", "value", "unit"],
    "additionalProperties": False,
}


def validate(doc, schema) -> None:
    assert set(doc) == set(schema["required"])
    assert isinstance(doc["parameter"], str) and len(doc["parameter"]) <= 20
    assert isinstance(doc["value"], int)
    assert doc["unit"] in schema["properties"]["unit"]["enum"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_model_output_parses_and_fits_the_schema(tiny_chat_llm, seed):
    params = SamplingParams(max_tokens=200, temperature=1.0, seed=seed, json_schema=FACT_SCHEMA)
    out = tiny_chat_llm.generate(["Extract the fact:"], params)[0]
    assert out.finish_reason == "stop", out.text
    validate(json.loads(out.text), FACT_SCHEMA)


def test_guided_and_free_requests_share_a_batch(tiny_chat_llm):
    outs = tiny_chat_llm.generate(
        ["free text", "json please"],
        [SamplingParams(max_tokens=10, temperature=0, ignore_eos=True),
         SamplingParams(max_tokens=200, temperature=0, json_schema=json.dumps(FACT_SCHEMA))],
    )
    assert len(outs[0].token_ids) == 10
    validate(json.loads(outs[1].text), FACT_SCHEMA)


def test_fields_are_written_in_the_schemas_property_order(tiny_chat_llm):
    fields = {"kind": {"enum": ["a", "b"]}, "unit": {"enum": ["ms", "GB"]}, "name": {"type": "string", "maxLength": 4}}
    schemas = [{"type": "object", "properties": dict(order), "required": list(fields), "additionalProperties": False}
               for order in (list(fields.items()), list(reversed(fields.items())))]
    outs = tiny_chat_llm.generate(["a", "b"], [SamplingParams(max_tokens=60, temperature=0, json_schema=schema)
                                               for schema in schemas])
    assert list(json.loads(outs[0].text)) == ["kind", "unit", "name"]
    assert list(json.loads(outs[1].text)) == ["name", "unit", "kind"]


def test_a_schema_xgrammar_cannot_compile_is_a_value_error(tiny_chat_llm):
    with pytest.raises(ValueError, match="json_schema"):
        tiny_chat_llm.generate(["x"], SamplingParams(json_schema={"type": "no-such-type"}))

"""How a model's reply text becomes OpenAI tool calls (`openai_api.split_tool_calls`), on the forms small
Qwen models write: the Hermes tag, a bare object, and a pretty-printed object in a ```json fence."""
from __future__ import annotations

import json

from inference.openai_api import CALL_FORMS, split_tool_calls, tool_call_grammar

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def arguments(calls):
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def test_a_pretty_printed_call_in_a_json_fence_is_a_call_and_the_fence_goes_with_it():
    text = '```json\n{\n  "name": "get_weather",\n  "arguments": {"city": "Paris"}\n}\n```'
    content, calls = split_tool_calls(text, ["get_weather"])
    assert content is None and arguments(calls) == [("get_weather", {"city": "Paris"})]


def test_text_around_a_fenced_call_stays_content():
    text = 'Let me check.\n```json\n{\n  "name": "get_weather",\n  "arguments": {"city": "Oslo"}\n}\n```\nDone.'
    content, calls = split_tool_calls(text, ["get_weather"])
    assert content == "Let me check.\n\nDone." and arguments(calls) == [("get_weather", {"city": "Oslo"})]


def test_tagged_and_compact_calls_are_calls():
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>' \
           '{"name": "get_weather", "arguments": {"city": "Lima"}}'
    content, calls = split_tool_calls(text, ["get_weather"])
    assert content is None
    assert arguments(calls) == [("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Lima"})]


def test_json_that_names_no_offered_tool_or_is_cut_short_stays_content():
    for text in ('```json\n{\n  "name": "Ada",\n  "arguments": {}\n}\n```',  # not an offered tool
                 '```json\n{"gpu": "A100", "memory_gib": 80}\n```',  # no name at all
                 '{\n  "name": "get_weather",\n  "arguments": {"city": "Ro'):  # cut short by max_tokens
        assert split_tool_calls(text, ["get_weather"]) == (text, [])


def test_the_grammar_constrains_every_form_a_call_may_begin_with():
    grammar = tool_call_grammar([WEATHER], "auto", True)["format"]
    begins = {tag["begin"] for tag in grammar["tags"]}
    assert len(begins) == len(CALL_FORMS)
    assert all(any(begin.startswith(trigger) for trigger in grammar["triggers"]) for begin in begins)
    assert all(tag["content"]["json_schema"] == WEATHER["function"]["parameters"] for tag in grammar["tags"])
    # every form's text, with valid arguments, parses back into the call
    for opening, between, end in CALL_FORMS:
        text = opening + "get_weather" + between + '{"city": "Kyiv"}' + end
        assert arguments(split_tool_calls(text, ["get_weather"])[1]) == [("get_weather", {"city": "Kyiv"})]

"""The server as the official `openai` client sees it: usage chunks, log-probabilities checked against
transformers, n > 1 on the prefix cache, stop, seed, response formats, tool calls, and the errors that
replace silent ignores (unknown model 404, unsupported fields and over-long max_tokens 400).

A tiny random Qwen2 with the default model's tokenizer serves these in seconds; the last test needs real
text (does the model call an offered tool by itself?) and runs the packaged default model.
"""

from __future__ import annotations

import json
import re
import threading

import openai
import pytest
import requests
import torch

from inference.config import Config
from inference.engine import LLMEngine
from inference.server import InferenceServer

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12},
                                                     "unit": {"enum": ["celsius", "fahrenheit"]}},
                   "required": ["city", "unit"], "additionalProperties": False}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}},
                                       "required": ["zone"], "additionalProperties": False}}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


def start(engine: LLMEngine, name: str, aliases: tuple[str, ...] = ()):
    srv = InferenceServer(("127.0.0.1", 0), engine, name, aliases=aliases)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, openai.OpenAI(base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1", api_key="unused",
                              max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def served(tiny_chat_model):
    engine = LLMEngine(Config(model=str(tiny_chat_model), dtype="float32", max_num_seqs=8,
                              max_num_batched_tokens=256, num_kvcache_blocks=256, max_model_len=1024))
    srv, client = start(engine, "tiny")
    yield srv, client
    srv.shutdown()
    srv.server_close()


def prefix_hits(srv) -> float:
    text = requests.get(f"http://127.0.0.1:{srv.server_address[1]}/metrics", timeout=10).text
    return float(re.search(r"^infrawiki_llm_prefix_cache_hit_tokens_total (\S+)$", text, re.M).group(1))


def fits_weather(arguments: str) -> None:
    args = json.loads(arguments)
    assert set(args) == {"city", "unit"} and isinstance(args["city"], str) and len(args["city"]) <= 12
    assert args["unit"] in ("celsius", "fahrenheit")


def test_models_report_the_context_length_and_an_unknown_model_is_a_404(served):
    _, client = served
    (card,) = client.models.list().data
    assert card.id == "tiny" and card.model_extra["context_length"] == 512  # the tiny model's positions cap 1024
    assert client.models.retrieve("tiny").id == "tiny"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4o")
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o", messages=ASK, max_tokens=2)
    assert caught.value.code == "model_not_found"


@pytest.mark.parametrize("chat", [True, False])
def test_streaming_with_include_usage_ends_with_a_usage_chunk_matching_the_text(served, chat):
    _, client = served
    common = dict(model="tiny", max_tokens=9, temperature=0, extra_body={"ignore_eos": True})
    if chat:
        whole = client.chat.completions.create(messages=ASK, **common)
        stream = client.chat.completions.create(messages=ASK, stream=True, stream_options={"include_usage": True},
                                                **common)
    else:
        whole = client.completions.create(prompt="The KV cache", **common)
        stream = client.completions.create(prompt="The KV cache", stream=True,
                                           stream_options={"include_usage": True}, **common)
    chunks = list(stream)
    *body, last = chunks
    assert last.choices == [] and last.usage.completion_tokens == 9
    assert last.usage.prompt_tokens == whole.usage.prompt_tokens
    assert all(c.usage is None for c in body)
    text = "".join((c.choices[0].delta.content or "") if chat else c.choices[0].text for c in body)
    assert text == (whole.choices[0].message.content if chat else whole.choices[0].text)
    assert body[-1].choices[0].finish_reason == "length"


def test_completion_logprobs_equal_transformers_log_softmax_on_the_same_weights(served, tiny_chat_model,
                                                                               hf_reference):
    srv, client = served
    prompt = srv.loop.engine.tokenize("PagedAttention stores keys and values in")
    reply = client.completions.create(model="tiny", prompt=prompt, max_tokens=6, temperature=0, logprobs=3,
                                      extra_body={"ignore_eos": True})
    lp = reply.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == 6
    assert "".join(lp.tokens) == reply.choices[0].text
    logits = hf_reference(tiny_chat_model)
    ids: list[int] = []
    for _ in range(6):  # transformers' greedy continuation of the same prompt
        ids.append(int(logits(prompt + ids)[-1].argmax()))
    assert lp.tokens == [srv.token_texts(t)[0] for t in ids]
    reference = torch.log_softmax(logits(prompt + ids[:-1]), dim=-1)
    for step, (token_id, logprob, top) in enumerate(zip(ids, lp.token_logprobs, lp.top_logprobs, strict=True)):
        row = reference[len(prompt) - 1 + step]
        assert logprob == pytest.approx(row[token_id].item(), abs=1e-3)
        best = row.topk(3)
        assert list(top.values()) == pytest.approx(best.values.tolist(), abs=1e-3)
        assert logprob == pytest.approx(max(top.values()), abs=1e-6)  # greedy: the sampled token is the best


def test_chat_logprobs_give_top_alternatives_and_stream_the_same_entries(served):
    _, client = served
    common = dict(model="tiny", messages=ASK, max_tokens=5, temperature=0, logprobs=True, top_logprobs=2,
                  extra_body={"ignore_eos": True})
    whole = client.chat.completions.create(**common)
    entries = whole.choices[0].logprobs.content
    assert len(entries) == 5 and "".join(e.token for e in entries) == whole.choices[0].message.content
    for e in entries:
        assert len(e.top_logprobs) == 2 and e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob
        assert e.logprob == pytest.approx(e.top_logprobs[0].logprob) and e.logprob <= 0
        assert bytes(e.bytes).decode(errors="replace") == e.token
    streamed = [c for c in client.chat.completions.create(stream=True, **common) if c.choices and c.choices[0].logprobs]
    assert [(e.token, round(e.logprob, 4)) for c in streamed for e in c.choices[0].logprobs.content] == \
        [(e.token, round(e.logprob, 4)) for e in entries]


def test_n_samples_are_seeded_reproducible_and_reuse_the_prompt_blocks(served):
    srv, client = served
    block = srv.loop.engine.config.block_size
    messages = [{"role": "user", "content": "Name three schedulers for LLM serving. " * 6}]
    prompt_len = len(srv.loop.engine.chat_prompt(messages))
    before = prefix_hits(srv)
    first = client.chat.completions.create(model="tiny", messages=messages, n=3, seed=11, temperature=1.0,
                                           max_tokens=8, extra_body={"ignore_eos": True})
    hits = prefix_hits(srv) - before
    assert [c.index for c in first.choices] == [0, 1, 2]
    texts = [c.message.content for c in first.choices]
    assert len(set(texts)) == 3, texts  # each choice samples with its own seed
    assert first.usage.completion_tokens == 24 and first.usage.prompt_tokens == prompt_len
    assert hits >= 2 * ((prompt_len - 1) // block) * block  # choices 1 and 2 read choice 0's full blocks
    again = client.chat.completions.create(model="tiny", messages=messages, n=3, seed=11, temperature=1.0,
                                           max_tokens=8, extra_body={"ignore_eos": True})
    assert [c.message.content for c in again.choices] == texts
    other = client.chat.completions.create(model="tiny", messages=messages, n=1, seed=99, temperature=1.0,
                                           max_tokens=8, extra_body={"ignore_eos": True})
    assert other.choices[0].message.content not in texts


def test_n_choices_stream_with_their_own_indices(served):
    _, client = served
    chunks = list(client.completions.create(model="tiny", prompt="alpha", n=2, seed=3, max_tokens=4, stream=True,
                                            extra_body={"ignore_eos": True}))
    finished = {c.choices[0].index: c.choices[0].finish_reason for c in chunks if c.choices[0].finish_reason}
    assert finished == {0: "length", 1: "length"}


def test_stop_cuts_the_text_before_the_stop_string(served):
    _, client = served
    free = client.completions.create(model="tiny", prompt="stop here", max_tokens=24, temperature=0,
                                     extra_body={"ignore_eos": True}).choices[0].text
    stop = free[len(free) // 2: len(free) // 2 + 2]
    assert stop.strip(), free
    cut = client.completions.create(model="tiny", prompt="stop here", max_tokens=24, temperature=0, stop=[stop],
                                    extra_body={"ignore_eos": True}).choices[0]
    assert cut.finish_reason == "stop" and cut.text == free[: free.index(stop)]


def test_response_format_json_schema_gives_json_under_the_schema(served):
    _, client = served
    fmt = {"type": "json_schema", "json_schema": {"name": "knob", "schema": {
        "type": "object", "properties": {"block_size": {"type": "integer"}, "engine": {"enum": ["vllm", "sglang"]}},
        "required": ["block_size", "engine"], "additionalProperties": False}}}
    reply = client.chat.completions.create(model="tiny", messages=ASK, response_format=fmt, seed=1, max_tokens=200)
    doc = json.loads(reply.choices[0].message.content)
    assert reply.choices[0].finish_reason == "stop"
    assert set(doc) == {"block_size", "engine"} and doc["engine"] in ("vllm", "sglang")


@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "function": {"name": "get_weather"}}])
def test_a_required_or_named_tool_call_has_arguments_valid_under_the_tool_schema(served, tool_choice):
    _, client = served
    for seed in (1, 2):
        reply = client.chat.completions.create(model="tiny", messages=ASK, tools=[WEATHER, TIME], seed=seed,
                                               tool_choice=tool_choice, parallel_tool_calls=False, max_tokens=120)
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls", choice
        (call,) = choice.message.tool_calls
        assert call.type == "function" and call.id.startswith("call_")
        if isinstance(tool_choice, dict) or call.function.name == "get_weather":
            assert call.function.name == "get_weather"
            fits_weather(call.function.arguments)
        else:
            assert call.function.name == "get_time" and json.loads(call.function.arguments)["zone"] in ("UTC", "CET")


def test_a_streamed_tool_call_arrives_whole_and_a_tool_result_can_be_sent_back(served):
    _, client = served
    named = {"type": "function", "function": {"name": "get_weather"}}
    chunks = list(client.chat.completions.create(model="tiny", messages=ASK, tools=[WEATHER], tool_choice=named,
                                                 seed=4, max_tokens=120, stream=True))
    calls = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert len(calls) == 1 and calls[0].function.name == "get_weather"
    fits_weather(calls[0].function.arguments)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    followup = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [{"id": calls[0].id, "type": "function", "function": {
            "name": "get_weather", "arguments": calls[0].function.arguments}}]},
        {"role": "tool", "tool_call_id": calls[0].id, "content": '{"temperature": 18}'},
    ]
    reply = client.chat.completions.create(model="tiny", messages=followup, tools=[WEATHER], max_tokens=3,
                                           extra_body={"ignore_eos": True})
    assert reply.usage.prompt_tokens > len(ASK[0]["content"]) and reply.choices[0].message.content is not None


@pytest.mark.parametrize("kwargs,param", [
    (dict(logit_bias={"100": 5}), "logit_bias"),
    (dict(frequency_penalty=0.5), "frequency_penalty"),
    (dict(tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "nope"}}), "tool_choice"),
    (dict(tools=[WEATHER], tool_choice="required", response_format={"type": "json_object"}), "response_format"),
    (dict(top_logprobs=3), "top_logprobs"),
    (dict(max_tokens=600), "max_tokens"),
    (dict(extra_body={"guided_regex": "a+"}), "guided_regex"),
])
def test_what_the_server_does_not_do_is_refused_with_a_400_naming_the_field(served, kwargs, param):
    _, client = served
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="tiny", messages=ASK, **kwargs)
    assert caught.value.body["param"] == param and caught.value.body["message"]


def test_max_tokens_beyond_the_context_names_the_limit(served):
    _, client = served
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(model="tiny", prompt="x", max_tokens=5000)
    assert "maximum context length is 512 tokens" in caught.value.body["message"]


@pytest.mark.slow
def test_the_default_model_calls_an_offered_tool_by_itself_answers_in_text_and_writes_json_objects():
    engine = LLMEngine(Config(model=None, max_num_seqs=4, max_num_batched_tokens=256, kv_cache_memory_gib=0.25,
                              max_model_len=2048))
    srv, client = start(engine, engine.loaded.name, aliases=("default",))
    try:
        tools = [{"type": "function", "function": {
            "name": "get_weather", "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
        reply = client.chat.completions.create(model="default", messages=ASK, tools=tools, temperature=0,
                                               max_tokens=40)
        (call,) = reply.choices[0].message.tool_calls
        assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
        assert reply.choices[0].finish_reason == "tool_calls"
        prose = client.chat.completions.create(model="default", temperature=0, max_tokens=12, tools=tools,
                                               messages=[{"role": "user", "content": "Name a prime number."}],
                                               logprobs=True, top_logprobs=2)
        assert prose.choices[0].message.tool_calls is None and prose.choices[0].message.content
        entries = prose.choices[0].logprobs.content
        assert all(e.logprob <= 0 for e in entries) and any(e.logprob > -0.1 for e in entries)
        # json_object has no schema to end the object, so it needs a model that writes real JSON
        obj = client.chat.completions.create(model="default", temperature=0, max_tokens=60,
                                             response_format={"type": "json_object"},
                                             messages=[{"role": "user", "content": "Give a JSON object with a "
                                                        "GPU name and its memory in GiB."}])
        assert isinstance(json.loads(obj.choices[0].message.content), dict)
    finally:
        srv.shutdown()
        srv.server_close()

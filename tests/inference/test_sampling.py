"""Sampling and stopping: greedy, temperature with seeds, top-k/top-p, stop strings, EOS, ignore_eos, max_tokens."""

from __future__ import annotations

import pytest
import torch

from inference import SamplingParams
from inference.layers.sampler import sample


def test_a_seeded_request_samples_the_same_tokens_whatever_it_is_batched_with(tiny_chat_llm):
    params = SamplingParams(max_tokens=12, temperature=1.0, seed=1234, ignore_eos=True)
    alone = tiny_chat_llm.generate(["hello world"], params)[0].token_ids
    batched = tiny_chat_llm.generate(["other prompt", "hello world", "third"],
                                     [SamplingParams(max_tokens=12, temperature=0.7), params,
                                      SamplingParams(max_tokens=5, temperature=0)])[1].token_ids
    assert alone == batched


def test_different_seeds_give_different_samples(tiny_chat_llm):
    outs = [tiny_chat_llm.generate(["hello"], SamplingParams(max_tokens=16, temperature=1.5, seed=s, ignore_eos=True))[0]
            for s in (1, 2)]
    assert outs[0].token_ids != outs[1].token_ids


def test_top_k_one_is_greedy(tiny_chat_llm):
    greedy = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=8, temperature=0, ignore_eos=True))[0]
    topk = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=8, temperature=1.0, top_k=1, seed=3,
                                                           ignore_eos=True))[0]
    assert greedy.token_ids == topk.token_ids


def test_top_p_keeps_only_the_smallest_set_reaching_the_mass():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    params = [SamplingParams(temperature=1.0, top_p=0.7)]
    gen = torch.Generator().manual_seed(0)
    drawn = {sample(logits, params, [None], gen)[0] for _ in range(300)}
    assert drawn == {0, 1}


def test_top_k_keeps_only_the_k_most_likely():
    logits = torch.tensor([[0.0, 3.0, 2.9, -1.0, 2.8]])
    gen = torch.Generator().manual_seed(0)
    drawn = {sample(logits, [SamplingParams(temperature=5.0, top_k=2)], [None], gen)[0] for _ in range(300)}
    assert drawn == {1, 2}


def test_max_tokens_stops_with_reason_length(tiny_chat_llm):
    out = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=5, temperature=0, ignore_eos=True))[0]
    assert len(out.token_ids) == 5 and out.finish_reason == "length"
    assert out.metrics.ttft_s > 0 and out.metrics.tpot_s > 0


def test_a_stop_string_ends_generation_and_is_cut_from_the_text(tiny_chat_llm):
    free = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=20, temperature=0, ignore_eos=True))[0]
    stop = free.text[3:6]
    assert stop.strip(), "the tiny model's greedy text should have visible characters to stop on"
    out = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=20, temperature=0, ignore_eos=True, stop=[stop]))[0]
    assert out.finish_reason == "stop"
    assert stop not in out.text and free.text.startswith(out.text)
    assert out.text == free.text[: free.text.find(stop)]


def test_eos_stops_unless_ignore_eos(tiny_chat_llm):
    first = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=4, temperature=0, ignore_eos=True))[0]
    eos = first.token_ids[1]  # pretend the second greedy token is an end-of-sequence token
    engine = tiny_chat_llm.engine
    saved = engine.model_config.eos_token_ids
    engine.model_config.eos_token_ids = [eos]
    try:
        stopped = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=4, temperature=0))[0]
        ignored = tiny_chat_llm.generate(["abc"], SamplingParams(max_tokens=4, temperature=0, ignore_eos=True))[0]
    finally:
        engine.model_config.eos_token_ids = saved
    assert stopped.finish_reason == "stop" and stopped.token_ids == first.token_ids[:2]
    assert ignored.token_ids == first.token_ids


@pytest.mark.parametrize("bad", [dict(max_tokens=0), dict(temperature=-1), dict(top_p=0), dict(top_p=1.5),
                                 dict(json_schema="{not json"), dict(stop=[""])])
def test_invalid_sampling_params_are_refused_with_a_message(bad):
    with pytest.raises(ValueError):
        SamplingParams(**bad)


def test_all_blocks_are_free_when_every_request_has_ended(tiny_chat_llm):
    tiny_chat_llm.generate(["a", "bb", "ccc"] * 3, SamplingParams(max_tokens=7, temperature=0.8, ignore_eos=True))
    assert tiny_chat_llm.engine.block_manager.num_used_blocks == 0
    tiny_chat_llm.engine.block_manager.check_invariants([])


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_incremental_text_equals_decoding_all_tokens_at_once(tiny_chat_llm, default_tokenizer, seed):
    """Random tokens from a 150k byte-level vocabulary split UTF-8 characters; the streamed text must still agree."""
    out = tiny_chat_llm.generate(["x"], SamplingParams(max_tokens=40, temperature=2.0, seed=seed, ignore_eos=True))[0]
    assert out.text == default_tokenizer.decode(out.token_ids, skip_special_tokens=True)


def test_a_batch_with_one_invalid_prompt_is_refused_whole(tiny_chat_llm):
    with pytest.raises(ValueError, match="max_model_len"):
        tiny_chat_llm.generate([[5, 6, 7], list(range(1, 2000))], SamplingParams(max_tokens=2))
    assert not tiny_chat_llm.engine.has_unfinished()
    assert tiny_chat_llm.engine.block_manager.num_used_blocks == 0

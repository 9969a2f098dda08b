"""The engine's logits equal transformers' on the same weights, at prefill and at every decode step,
however the scheduler slices the work: mixed-length batches, chunked prefill, preemption, prefix-cache hits."""

from __future__ import annotations

import random

import pytest
import torch

from inference import LLM, SamplingParams

ATOL = 2e-4


def prompts(seed: int, lengths: list[int], vocab: int = 500) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(1, vocab) for _ in range(n)] for n in lengths]


def assert_matches_reference(llm: LLM, outputs, reference) -> None:
    """Row k the engine sampled from must equal the reference logits at position prompt_len - 1 + k."""
    kept = llm.engine.runner.kept_logits
    for out in outputs:
        tokens = out.prompt_token_ids + out.token_ids
        ref = reference(tokens)
        rows = kept[out.request_id]
        assert len(rows) == len(out.token_ids)
        start = len(out.prompt_token_ids) - 1
        for k, row in enumerate(rows):
            diff = (row - ref[start + k]).abs().max().item()
            assert diff < ATOL, f"request {out.request_id} step {k}: max |diff| {diff}"


@pytest.fixture(params=[True, False], ids=["fused-decode", "reference-decode"])
def fused_decode(request) -> bool:
    """Decode-only steps through the compiled layer loop, or every step through the Python layers."""
    return request.param


def make_llm(folder, fused_decode: bool, **kwargs) -> LLM:
    llm = LLM(str(folder), dtype="float32", fused_decode=fused_decode, **kwargs)
    llm.engine.runner.keep_logits = True
    return llm


def assert_decode_path(llm: LLM, fused_decode: bool) -> None:
    fused = llm.engine.runner.model.fused_decoder
    assert (fused is not None and fused.steps > 0) == fused_decode, llm.engine.reference_path_reason


def test_mixed_length_batch_matches_transformers_at_prefill_and_every_decode_step(tiny_model_dir, hf_reference, fused_decode):
    llm = make_llm(tiny_model_dir, fused_decode, max_num_batched_tokens=512)
    outs = llm.generate(prompts(1, [5, 17, 40, 1, 33]), SamplingParams(max_tokens=12, temperature=0, ignore_eos=True))
    assert [len(o.token_ids) for o in outs] == [12] * 5
    assert_matches_reference(llm, outs, hf_reference(tiny_model_dir))
    assert_decode_path(llm, fused_decode)


def test_chunked_prefill_gives_the_same_logits_as_one_pass(tiny_model_dir, hf_reference, fused_decode):
    llm = make_llm(tiny_model_dir, fused_decode, max_num_batched_tokens=7, block_size=4)
    outs = llm.generate(prompts(2, [30, 23]), SamplingParams(max_tokens=6, temperature=0, ignore_eos=True))
    assert llm.engine.stats.steps > 30 // 7  # the prompts really were split over several steps
    assert_matches_reference(llm, outs, hf_reference(tiny_model_dir))
    assert_decode_path(llm, fused_decode)


def test_sequences_preempted_for_lack_of_blocks_recompute_to_the_same_logits(tiny_model_dir, hf_reference, fused_decode):
    llm = make_llm(tiny_model_dir, fused_decode, block_size=4, num_kvcache_blocks=16, max_model_len=64, max_num_batched_tokens=64)
    outs = llm.generate(prompts(3, [20, 18, 15, 22]), SamplingParams(max_tokens=20, temperature=0, ignore_eos=True))
    assert llm.engine.scheduler.num_preemptions > 0
    assert any(o.metrics.num_preemptions for o in outs)
    assert_matches_reference(llm, outs, hf_reference(tiny_model_dir))
    assert_decode_path(llm, fused_decode)
    assert llm.engine.block_manager.num_used_blocks == 0


def test_prefix_cache_hits_give_the_same_logits(tiny_model_dir, hf_reference, fused_decode):
    llm = make_llm(tiny_model_dir, fused_decode, block_size=4)
    shared = prompts(4, [24])[0]
    first = llm.generate([shared + [7, 8]], SamplingParams(max_tokens=4, temperature=0, ignore_eos=True))
    second = llm.generate([shared + [9], shared + [10, 11, 12]],
                          SamplingParams(max_tokens=8, temperature=0, ignore_eos=True))
    assert first[0].metrics.num_cached_tokens == 0
    assert [o.metrics.num_cached_tokens for o in second] == [24, 24]
    assert_matches_reference(llm, first + second, hf_reference(tiny_model_dir))
    assert_decode_path(llm, fused_decode)


def test_batched_output_equals_each_prompt_run_alone(tiny_model_dir):
    params = SamplingParams(max_tokens=10, temperature=0, ignore_eos=True)
    batch = prompts(5, [9, 31, 4])
    llm = LLM(str(tiny_model_dir), dtype="float32", enable_prefix_caching=False)
    together = [o.token_ids for o in llm.generate(batch, params)]
    alone = [llm.generate([p], params)[0].token_ids for p in batch]
    assert together == alone


def test_bf16_engine_stays_close_to_float32_reference(tiny_model_dir, hf_reference, fused_decode):
    llm = LLM(str(tiny_model_dir), dtype="bfloat16", fused_decode=fused_decode)
    llm.engine.runner.keep_logits = True
    out = llm.generate(prompts(6, [16]), SamplingParams(max_tokens=6, temperature=0, ignore_eos=True))[0]
    ref = hf_reference(tiny_model_dir)(out.prompt_token_ids + out.token_ids)
    for k, row in enumerate(llm.engine.runner.kept_logits[out.request_id]):
        assert torch.allclose(row, ref[len(out.prompt_token_ids) - 1 + k], atol=0.1, rtol=0.05), f"step {k}"
    assert_decode_path(llm, fused_decode)

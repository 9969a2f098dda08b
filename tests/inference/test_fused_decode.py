"""The compiled decode path (inference/csrc/decode_layers.cpp) against the Python layers it replaces.

In float32 both paths are checked against transformers in test_numerics_vs_transformers.py; here the
bf16 and int8 paths are compared with each other (tiny models; the default model in bf16), only
decode-only steps take the compiled loop, and a missing compiler keeps the Python path with a reason.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from inference import LLM, SamplingParams, extension
from inference.layers.linear import int8_available
from tests.conftest import ROOT


def generate_keeping_logits(llm: LLM, prompts: list[list[int]], max_tokens: int):
    llm.engine.runner.keep_logits = True
    outs = llm.generate(prompts, SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True))
    return outs, [llm.engine.runner.kept_logits[o.request_id] for o in outs]


@pytest.mark.parametrize(("settings", "tolerance"), [
    # bf16 rounding of the same values summed in another order moves a logit by an ulp or two
    (dict(dtype="bfloat16"), 0.05),
    # the same fbgemm calls on float32 activations: only the attention's summation order differs
    (dict(quantization="int8"), 1e-3),
], ids=["bf16", "int8"])
def test_decode_steps_agree_with_the_python_layers(tiny_model_dir, settings, tolerance):
    """A mixed-length batch, so decode steps carry several sequences with different block tables."""
    if "quantization" in settings and not int8_available():
        pytest.skip("torch was built without fbgemm")
    rng = random.Random(7)
    prompts = [[rng.randrange(1, 500) for _ in range(n)] for n in (3, 21, 40, 9)]
    runs = {}
    for fused in (True, False):
        llm = LLM(str(tiny_model_dir), fused_decode=fused, block_size=4, **settings)
        runs[fused] = generate_keeping_logits(llm, prompts, 12)
        decoder = llm.engine.runner.model.fused_decoder
        assert (decoder is not None and decoder.steps > 0) == fused, llm.engine.reference_path_reason
    assert [o.token_ids for o in runs[True][0]] == [o.token_ids for o in runs[False][0]]
    for fast, slow in zip(runs[True][1], runs[False][1], strict=True):
        for step, (a, b) in enumerate(zip(fast, slow, strict=True)):
            assert (a - b).abs().max().item() < tolerance, f"step {step}"


@pytest.mark.slow
def test_the_default_model_decodes_alike_on_both_paths():
    """bf16, greedy: the fused path follows the Python path's tokens until a near-tie, with close logits."""
    prompt = "def quicksort(arr):\n    \"\"\"Sort a list of numbers.\"\"\"\n"
    rows = {}
    for fused in (True, False):
        llm = LLM(None, dtype="bfloat16", fused_decode=fused)
        outs, kept = generate_keeping_logits(llm, [llm.engine.tokenize(prompt)], 24)
        rows[fused] = (outs[0].token_ids, kept[0])
    (fast_tokens, fast), (slow_tokens, slow) = rows[True], rows[False]
    for step, (a, b) in enumerate(zip(fast, slow, strict=True)):
        assert (a - b).abs().max().item() < 0.5, f"step {step}"
        if fast_tokens[step] != slow_tokens[step]:
            top2 = b.topk(2).values
            assert (top2[0] - top2[1]).item() < 0.5, f"step {step}: tokens part at a clear choice"
            break
    assert fast_tokens[:8] == slow_tokens[:8]


def test_a_missing_compiler_leaves_the_python_layers_with_a_reason(monkeypatch, caplog):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    module, why = extension.load_extension.__wrapped__()
    assert module is None
    assert "C++ compiler" in why and why in caplog.text


def test_only_decode_only_steps_take_the_extension(tiny_model_dir):
    """A long prompt prefills in chunks while a short one decodes: those mixed steps stay in Python."""
    llm = LLM(str(tiny_model_dir), dtype="float32", max_num_batched_tokens=8)
    runner, decode_only = llm.engine.runner, []
    prepare = runner.prepare

    def recording_prepare(out):
        prepared = prepare(out)
        decode_only.append(not prepared[2].prefills)
        return prepared

    runner.prepare = recording_prepare
    llm.generate([[5, 6], list(range(1, 40))], SamplingParams(max_tokens=6, temperature=0, ignore_eos=True))
    assert 0 < sum(decode_only) < len(decode_only)  # the workload really mixed both kinds of step
    assert runner.model.fused_decoder.steps == sum(decode_only)


def test_a_build_killed_mid_way_does_not_make_the_next_engine_start_wait_forever():
    """torch's lock file survives a builder that was killed; the next build must not wait on it."""
    module, reason = extension.load_extension()
    assert module is not None, reason
    name = f"inference_decode_layers_{extension._cpu_signature()}"
    stale = extension.cache_dir() / "extensions" / name / "lock"
    stale.write_text("")  # what `kill` during a build leaves behind
    probe = ("from inference import extension\n"
             "module, reason = extension.load_extension()\n"
             "assert module is not None, reason\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not stale.exists()

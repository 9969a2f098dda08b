"""The int8 projection path (W8A8, fbgemm): when "auto" picks it, that per-token activation scales keep
outlier tokens from spoiling their neighbours, and that the default model's next-token choices stay those
of the exact float32 engine."""

from __future__ import annotations

import pytest
import torch

from inference import LLM
from inference import config as config_module
from inference.config import Config
from inference.layers.linear import Linear, int8_linear, pack_int8
from inference.quality import compare, next_token_logits, reference_continuation

pytestmark = pytest.mark.skipif(not config_module.int8_available(), reason="torch was built without fbgemm")


def test_auto_picks_int8_only_for_an_engine_that_would_otherwise_compute_in_float32(monkeypatch):
    monkeypatch.setattr(config_module, "cpu_has_fast_bf16", lambda: False)
    assert Config().int8 and Config().torch_dtype == torch.float32
    assert not Config(dtype="float32").int8  # an explicit dtype means dense weights (exact vs transformers)
    assert not Config(quantization="none").int8
    monkeypatch.setattr(config_module, "cpu_has_fast_bf16", lambda: True)
    assert not Config().int8 and Config().torch_dtype == torch.bfloat16
    assert Config(quantization="int8").int8 and Config(quantization="int8").torch_dtype == torch.float32


@pytest.mark.parametrize(("kwargs", "names"), [
    (dict(quantization="int4"), "quantization"),
    (dict(quantization="int8", dtype="bfloat16"), "dtype"),
])
def test_impossible_quantization_settings_fail_at_start_naming_the_knob(kwargs, names):
    with pytest.raises(ValueError, match=names):
        Config(**kwargs)


def test_per_token_scales_keep_an_outlier_token_from_coarsening_the_others():
    torch.manual_seed(0)
    weight, bias = torch.randn(256, 512) / 512**0.5, torch.randn(256)
    x = torch.randn(8, 512)
    x[3] *= 200.0  # one token with huge activations, as a long prompt's attention-sink token has
    exact = x @ weight.T + bias
    packed = pack_int8(weight)
    error = lambda y, rows=slice(None): ((y - exact[rows]).norm(dim=1) / exact[rows].norm(dim=1))  # noqa: E731
    ours = error(int8_linear(x, packed, bias))
    per_tensor = error(torch.ops.quantized.linear_dynamic(x, packed, True) + bias)
    assert ours.max() < 0.03
    assert per_tensor[[0, 1, 2, 4, 5, 6, 7]].min() > 3 * ours.max()  # what the per-token scales buy
    assert error(int8_linear(x[5:6], packed, bias), slice(5, 6)).item() < 0.03  # the batch-1 shortcut


def test_an_int8_layer_reads_a_quarter_of_the_float32_bytes():
    layer = Linear(512, 256)
    dense = layer.weight_bytes()
    layer.pack(int8=True)
    assert layer.packed_int8 is not None and layer.weight.numel() == 0  # the float32 copy is dropped
    assert layer.weight_bytes() < 0.3 * dense


def test_the_quality_measure_is_zero_against_itself_and_sees_int8s_loss(tiny_model_dir):
    """inference.quality: the same float32 engine scores KL 0 and full agreement against itself; the int8
    engine a positive KL (its logits differ) that stays small."""
    reference = LLM(str(tiny_model_dir), dtype="float32", max_num_batched_tokens=64)
    prompts = ([5, 17, 42, 99, 3, 250, 7], list(range(30, 70)))
    continuations = [reference_continuation(reference, prompt, 6) for prompt in prompts]
    itself = compare(reference, continuations)
    assert itself.steps == 12 and itself.top1_agreement == 1.0 and itself.max_kl < 1e-6
    quantized = compare(LLM(str(tiny_model_dir), quantization="int8", max_num_batched_tokens=64), continuations)
    assert quantized.steps == 12 and 0 < quantized.mean_kl < 0.05 and quantized.max_kl >= quantized.mean_kl


def test_a_tiny_model_under_int8_stays_close_to_its_float32_logits(tiny_model_dir):
    reference = LLM(str(tiny_model_dir), dtype="float32", max_num_batched_tokens=64)
    quantized = LLM(str(tiny_model_dir), quantization="int8", max_num_batched_tokens=64)
    for prompt in ([5, 17, 42, 99, 3, 250, 7], list(range(30, 70))):
        prefixes, ref_rows = reference_continuation(reference, prompt, 8)
        for prefix, ref_row in zip(prefixes, ref_rows, strict=True):
            cosine = torch.nn.functional.cosine_similarity(next_token_logits(quantized, prefix), ref_row, dim=0)
            assert cosine > 0.995


@pytest.mark.slow
def test_the_default_model_under_int8_keeps_the_float32_engines_decisive_choices():
    """Fed the float32 engine's own continuations (teacher forcing): wherever float32 is decisive (its top
    token leads the runner-up by 0.2 probability or more) int8 picks the same token, and the mean KL
    divergence stays small. Near-ties may flip either way, as they do between any two dtypes."""
    prompts = [  # prompts of a realistic length; see inference/README.md on prompts of a handful of tokens
        "import heapq\n\n\ndef dijkstra(graph: dict[str, dict[str, int]], source: str) -> dict[str, int]:\n"
        '    """Shortest distance from source to every reachable node (non-negative edge weights)."""\n',
        "<|im_start|>system\nYou are a careful assistant for engineers who deploy language models.<|im_end|>\n"
        "<|im_start|>user\nList three ways continuous batching changes LLM serving throughput.<|im_end|>\n"
        "<|im_start|>assistant\n"]
    dense = LLM(None, dtype="float32", max_num_batched_tokens=256)
    continuations = [reference_continuation(dense, prompt, 24) for prompt in prompts]
    del dense
    quantized = LLM(None, quantization="int8", max_num_batched_tokens=256)
    assert quantized.engine.runner.model.lm_head.packed_int8 is not None
    decisive, flipped, divergence = 0, [], []
    for prefixes, ref_rows in continuations:
        for prefix, ref_row in zip(prefixes, ref_rows, strict=True):
            row = next_token_logits(quantized, prefix)
            divergence.append(torch.nn.functional.kl_div(row.log_softmax(-1), ref_row.log_softmax(-1),
                                                         log_target=True, reduction="sum").item())
            top2 = ref_row.softmax(-1).topk(2).values
            if top2[0] - top2[1] >= 0.2:
                decisive += 1
                if row.argmax() != ref_row.argmax():
                    flipped.append(len(prefix))
    mean_kl = sum(divergence) / len(divergence)
    assert decisive >= 24, f"only {decisive} decisive steps: the prompts no longer test much"
    assert not flipped, f"int8 changed a decisive float32 choice at positions {flipped}"
    assert mean_kl < 0.05, f"mean KL(float32 || int8) = {mean_kl:.3f}"

"""The block-scaled int8 decode kernels (inference/csrc/int8_blocks.cpp) against their definition in
plain torch (inference/layers/int8_blocks.reference_linear), on every kernel this CPU runs.

Tolerances: the group dot products are exact int32 in kernel and reference, so float32 outputs differ
only by float32 summation order (relative 1e-5 of the row's largest output); bf16 outputs by one
rounding of that (2^-7 relative). Against the unquantised float32 product, the quantisation error
itself is bounded by a cosine similarity of 0.999 on Gaussian data.
"""

from __future__ import annotations

import random

import pytest
import torch

from inference import LLM, SamplingParams, extension
from inference.cpu import cpu_flags
from inference.layers import int8_blocks
from tests.inference.conftest import build_tiny

ISAS = [isa for isa, needs in (("amx", {"amx_tile", "amx_int8", "avx512f", "avx512bw"}),
                               ("avx512_vnni", {"avx512f", "avx512bw", "avx512_vnni"}), ("avx2", {"avx2", "fma"}))
        if needs <= cpu_flags()]


@pytest.fixture(scope="module")
def module():
    module, why = extension.load_extension()
    assert module is not None, why
    return module


def test_this_machine_has_a_kernel_to_test():
    """Every x86-64 CPU the engine targets has AVX2; an empty list would make the tests below vacuous."""
    assert ISAS


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize(("rows", "k", "n"), [(1, 128, 1), (3, 256, 5), (4, 896, 64), (5, 384, 33), (16, 1536, 70),
                                              (33, 128, 2), (40, 256, 16)])
def test_kernel_equals_the_reference(module, isa, dtype, rows, k, n):
    """Tile remainders in both directions (rows not a multiple of the tile's, odd weight rows; the tiled
    kernels take whole 16-row weight tiles), bias, both dtypes."""
    if isa in int8_blocks.TILED:
        n = 16 * (1 + n // 16)
    torch.manual_seed(rows * 1000 + n)
    x = (torch.randn(rows, k) * torch.rand(rows, 1) * 4).to(dtype)
    x[0, :7] = 0  # a group may hold zeros; a whole zero group must not divide by zero
    if k >= 256:
        x[-1, 128:256] = 0
    q, scales = int8_blocks.quantize_weight(torch.randn(n, k))
    bias = torch.randn(n).to(dtype)
    got = module.int8_linear(x, *int8_blocks.laid_out(q, scales, isa), bias, int8_blocks.ISAS[isa])
    want = int8_blocks.reference_linear(x, q, scales, bias)
    assert got.dtype == dtype and got.shape == (rows, n)
    scale = want.float().abs().amax(dim=1, keepdim=True).clamp_min(1e-6)
    tolerance = 1e-5 if dtype == torch.float32 else 2**-7
    assert ((got.float() - want.float()).abs() / scale).max().item() <= tolerance


def test_quantisation_error_is_small_and_confined_to_a_group():
    torch.manual_seed(0)
    w, x = torch.randn(256, 1024), torch.randn(8, 1024)
    q, scales = int8_blocks.quantize_weight(w)
    got = int8_blocks.reference_linear(x, q, scales, None)
    assert torch.nn.functional.cosine_similarity(got.flatten(), (x @ w.T).flatten(), dim=0) > 0.999
    spiked = x.clone()
    spiked[:, 5] = 1000.0  # an outlier coarsens its own group's steps only
    no_spike_groups = spiked[:, 128:]
    qx, _ = int8_blocks.quantize_activations(spiked)
    assert torch.equal(qx.flatten(1)[:, 128:], int8_blocks.quantize_activations(no_spike_groups)[0].flatten(1))


@pytest.mark.parametrize(("isa", "fast_bf16", "kwargs", "expected"), [
    ("avx512_vnni", True, {}, True), ("amx", True, {}, True),
    ("avx2", True, {}, False),  # the AVX2 kernel beat oneDNN's bf16 only up to 4 rows: dense bf16 stays
    ("avx512_vnni", False, {}, False),  # no native bf16: "auto" is W8A8 int8 (test_int8.py)
    ("avx512_vnni", True, {"dtype": "bfloat16"}, False),  # an explicit dtype means dense weights
    ("avx512_vnni", True, {"quantization": "none"}, False),
])
def test_auto_picks_int8_blocks_where_a_tiled_kernel_runs_beside_native_bf16(monkeypatch, isa, fast_bf16, kwargs,
                                                                           expected):
    from inference import config as config_module

    monkeypatch.setattr(config_module, "cpu_has_fast_bf16", lambda: fast_bf16)
    monkeypatch.setattr(int8_blocks, "kernel_choice", lambda: int8_blocks.KernelChoice(isa, "test"))
    config = config_module.Config(**kwargs)
    assert config.int8_decode is expected
    assert not (config.int8 and config.int8_decode)


def test_the_environment_switch_forces_the_avx2_kernel(monkeypatch):
    monkeypatch.setenv(int8_blocks.ISA_ENV, "avx2")
    int8_blocks.kernel_choice.cache_clear()
    try:
        assert int8_blocks.kernel_choice().isa == "avx2"
        monkeypatch.setenv(int8_blocks.ISA_ENV, "none")
        int8_blocks.kernel_choice.cache_clear()
        assert int8_blocks.kernel_choice().isa == ""
        monkeypatch.setenv(int8_blocks.ISA_ENV, "sse2")
        int8_blocks.kernel_choice.cache_clear()
        with pytest.raises(ValueError, match="INFRAWIKI_CPU_ISA"):
            int8_blocks.kernel_choice()
    finally:
        monkeypatch.delenv(int8_blocks.ISA_ENV)
        int8_blocks.kernel_choice.cache_clear()


@pytest.fixture(scope="module")
def tiny_128(tmp_path_factory):
    """A tiny Qwen2 whose projections split into whole 128-input groups (the kernels' unit)."""
    return build_tiny(tmp_path_factory.mktemp("tiny-128"), "qwen2", hidden_size=128)


def run_engine(folder, monkeypatch, isa: str, **settings):
    monkeypatch.setenv(int8_blocks.ISA_ENV, isa)
    int8_blocks.kernel_choice.cache_clear()
    llm = LLM(str(folder), block_size=4, **settings)
    llm.engine.runner.keep_logits = True
    rng = random.Random(3)
    prompts = [[rng.randrange(1, 500) for _ in range(n)] for n in (3, 21, 40, 9, 17)]
    outs = llm.generate(prompts, SamplingParams(max_tokens=10, temperature=0, ignore_eos=True))
    return llm, [(o.token_ids, torch.stack(llm.engine.runner.kept_logits[o.request_id])) for o in outs]


def same_input_steps(a, b):
    """Pairs of (logits, logits) of the steps whose inputs were equal: a random tiny model has near-ties,
    so two numerics may pick different tokens, after which the rows describe different texts."""
    pairs = []
    for (tokens_a, logits_a), (tokens_b, logits_b) in zip(a, b, strict=True):
        for step in range(len(tokens_a)):
            pairs.append((logits_a[step], logits_b[step]))
            if tokens_a[step] != tokens_b[step]:
                break
    assert len(pairs) >= 2 * len(a), "the runs parted at their first decode step"
    return pairs


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("fused", [True, False], ids=["compiled-loop", "python-layers"])
def test_engine_decode_with_int8_blocks(tiny_128, monkeypatch, isa, fused):
    """Decode steps take the int8 copies on both paths and every kernel, and stay close to bf16 weights."""
    try:
        llm, logits = run_engine(tiny_128, monkeypatch, isa, quantization="int8_decode", fused_decode=fused)
        model = llm.engine.runner.model
        assert all(layer.mlp.down_proj.qweight is not None for layer in model.decoder_layers())
        assert (model.fused_decoder is not None and model.fused_decoder.steps > 0) == fused
        _, dense = run_engine(tiny_128, monkeypatch, isa, quantization="none", dtype="bfloat16", fused_decode=fused)
    finally:
        monkeypatch.delenv(int8_blocks.ISA_ENV)
        int8_blocks.kernel_choice.cache_clear()
    for got, want in same_input_steps(logits, dense):
        assert torch.nn.functional.cosine_similarity(got, want, dim=0).item() > 0.99


def test_the_kernels_agree_with_each_other_on_the_engine(tiny_128, monkeypatch):
    """Every kernel gives the others' logits (same int32 sums; float order aside, whose bf16 roundings can
    move an activation by one int8 step in a later layer); on an AVX2-only CPU
    the dispatch must have picked AVX2."""
    if len(ISAS) < 2:
        assert ISAS == ["avx2"] and int8_blocks.kernel_choice().isa == "avx2"
        return
    try:
        runs = [run_engine(tiny_128, monkeypatch, isa, quantization="int8_decode")[1] for isa in ISAS]
    finally:
        monkeypatch.delenv(int8_blocks.ISA_ENV)
        int8_blocks.kernel_choice.cache_clear()
    for other in runs[1:]:
        for a, b in same_input_steps(runs[0], other):
            # bf16 activations: where a sum rounds the other way, an int8 step flips downstream
            assert torch.nn.functional.cosine_similarity(a, b, dim=0).item() > 0.995

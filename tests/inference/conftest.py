"""Fixtures for the engine's tests: tiny random Qwen2/Llama checkpoints saved as HF safetensors folders.

The engine is checked against Hugging Face transformers running the very same weights, so the tiny
models only need the real architectures, not real knowledge. `tiny_chat_model` also carries the
default model's real tokenizer and chat template, so the server and guided decoding are exercised
end to end in seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from inference import LLM
from inference.config import Config
from inference.engine import LLMEngine
from inference.request_limits import ServerLimits
from inference.server import InferenceServer


def build_tiny(folder: Path, arch: str, vocab_size: int = 512, seed: int = 0, hidden_size: int = 64,
               max_positions: int = 512) -> Path:
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    common = dict(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_positions,
                  initializer_range=0.1, rms_norm_eps=1e-6, eos_token_id=vocab_size - 1, bos_token_id=0)
    torch.manual_seed(seed)
    if arch == "qwen2":  # Qwen2: q/k/v bias, output head tied to the embedding
        model = Qwen2ForCausalLM(Qwen2Config(tie_word_embeddings=True, rope_theta=10000.0, **common))
    else:  # Llama: no bias, separate output head
        model = LlamaForCausalLM(LlamaConfig(tie_word_embeddings=False, rope_theta=500000.0, **common))
    with torch.no_grad():  # HF zero-initialises biases; random ones make the bias path observable
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    model.save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="session", params=["qwen2", "llama"])
def tiny_model_dir(request, tmp_path_factory) -> Path:
    return build_tiny(tmp_path_factory.mktemp(f"tiny-{request.param}"), request.param)


@pytest.fixture(scope="session")
def hf_reference():
    """fn(folder) -> fn(token_ids) -> float32 logits [len, vocab] from transformers on the same weights."""
    from transformers import AutoModelForCausalLM

    cache: dict[Path, object] = {}

    def for_folder(folder: Path):
        if folder not in cache:
            cache[folder] = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32,
                                                                 attn_implementation="eager").eval()
        model = cache[folder]

        def logits(token_ids: list[int]) -> torch.Tensor:
            with torch.no_grad():
                return model(torch.tensor([token_ids])).logits[0].float()

        return logits

    return for_folder


@pytest.fixture(scope="session")
def default_tokenizer():
    from inference.loader import resolve_model_path
    from inference.loader.tokenizer import load_gguf_tokenizer

    return load_gguf_tokenizer(resolve_model_path("default"))


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory, default_tokenizer) -> Path:
    """Random tiny Qwen2 with the default model's vocabulary, tokenizer and chat template."""
    folder = build_tiny(tmp_path_factory.mktemp("tiny-chat"), "qwen2", vocab_size=len(default_tokenizer))
    default_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_chat_llm(tiny_chat_model: Path) -> LLM:
    return LLM(str(tiny_chat_model), dtype="float32", max_num_seqs=8, max_num_batched_tokens=256,
               num_kvcache_blocks=256, max_model_len=1024)


@contextmanager
def serving(model: Path, *, num_kvcache_blocks: int, max_model_len: int, max_num_seqs: int = 8,
            limits: ServerLimits | None = None) -> Iterator[tuple[InferenceServer, str]]:
    """The built-in server over a tiny model on a free loopback port, (server, base URL), stopped on exit:
    the one way the HTTP tests start a server in-process (each sizes the cache for what it sends)."""
    engine = LLMEngine(Config(model=str(model), dtype="float32", max_num_seqs=max_num_seqs,
                              max_num_batched_tokens=256, num_kvcache_blocks=num_kvcache_blocks,
                              max_model_len=max_model_len))
    extra = {"limits": limits} if limits is not None else {}
    srv = InferenceServer(("127.0.0.1", 0), engine, "tiny", **extra)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv, f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()

"""GGUF loading beyond the default model: a tiny Llama written as GGUF (llama.cpp's Q/K permutation, F32, F16,
Q8_0, Q5_0, Q4_0 tensors) runs with the same logits as transformers loading that file; bad files fail clearly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from inference import LLM, SamplingParams
from inference.loader.gguf_loader import GGUFError, open_gguf, read_config

from .conftest import build_tiny

HF_TO_GGUF = {"input_layernorm.weight": ("attn_norm.weight", "F32"),
              "post_attention_layernorm.weight": ("ffn_norm.weight", "F32"),
              "self_attn.q_proj.weight": ("attn_q.weight", "Q8_0"), "self_attn.k_proj.weight": ("attn_k.weight", "Q5_0"),
              "self_attn.v_proj.weight": ("attn_v.weight", "F16"), "self_attn.o_proj.weight": ("attn_output.weight", "Q8_0"),
              "mlp.gate_proj.weight": ("ffn_gate.weight", "Q4_0"), "mlp.up_proj.weight": ("ffn_up.weight", "Q8_0"),
              "mlp.down_proj.weight": ("ffn_down.weight", "F16")}


def permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's converter layout for Q/K rows (what a real Llama GGUF holds)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_llama_gguf(folder: Path, path: Path) -> None:
    import gguf
    from safetensors.torch import load_file

    weights = {k.removeprefix("model."): v.float().numpy() for k, v in load_file(folder / "model.safetensors").items()}
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(2)
    w.add_context_length(512)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_rope_dimension_count(16)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(500000.0)
    w.add_vocab_size(512)

    def put(name: str, array: np.ndarray, kind: str) -> None:
        qtype = gguf.GGMLQuantizationType[kind]
        if kind == "F32":
            w.add_tensor(name, array.astype(np.float32))
        elif kind == "F16":
            w.add_tensor(name, array.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(array.astype(np.float32), qtype),
                         raw_dtype=qtype)

    put("token_embd.weight", weights["embed_tokens.weight"], "F16")
    put("output_norm.weight", weights["norm.weight"], "F32")
    put("output.weight", weights["lm_head.weight"], "Q8_0")
    for layer in range(2):
        for hf_name, (gg_name, kind) in HF_TO_GGUF.items():
            array = weights[f"layers.{layer}.{hf_name}"]
            if gg_name == "attn_q.weight":
                array = permute(array, 4)
            elif gg_name == "attn_k.weight":
                array = permute(array, 2)
            put(f"blk.{layer}.{gg_name}", array, kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.fixture(scope="module")
def llama_gguf(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("llama-gguf")
    folder = build_tiny(root / "hf", "llama", seed=7)
    path = root / "tiny-llama.gguf"
    write_llama_gguf(folder, path)
    return path


def test_quantised_llama_gguf_matches_transformers_loading_the_same_file(llama_gguf: Path):
    from transformers import AutoModelForCausalLM

    llm = LLM(str(llama_gguf), dtype="float32", max_num_batched_tokens=64)
    llm.engine.runner.keep_logits = True
    prompt = [5, 99, 42, 300, 7, 12, 250, 31, 64, 128, 1, 77]
    out = llm.generate([prompt], SamplingParams(max_tokens=6, temperature=0, ignore_eos=True))[0]
    ref = AutoModelForCausalLM.from_pretrained(llama_gguf.parent, gguf_file=llama_gguf.name, dtype=torch.float32,
                                               attn_implementation="eager").eval()
    with torch.no_grad():
        logits = ref(torch.tensor([prompt + out.token_ids])).logits[0]
    rows = llm.engine.runner.kept_logits[out.request_id]
    for k, row in enumerate(rows):
        assert torch.allclose(row, logits[len(prompt) - 1 + k], atol=2e-4), f"step {k}"


def test_gguf_metadata_becomes_the_model_config(llama_gguf: Path):
    cfg = read_config(open_gguf(llama_gguf))
    assert (cfg.architecture, cfg.num_layers, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim) == ("llama", 2, 4, 2, 16)
    assert not cfg.attention_bias and not cfg.tie_word_embeddings and cfg.rope_theta == 500000.0


def test_a_truncated_gguf_is_refused_with_a_clear_error(llama_gguf: Path, tmp_path: Path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(llama_gguf.read_bytes()[:-1000])
    with pytest.raises(GGUFError, match="past the end"):
        open_gguf(cut)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path):
    bogus = tmp_path / "model.gguf"
    bogus.write_bytes(b"PK\x03\x04 not a gguf at all" * 10)
    with pytest.raises(GGUFError, match="not a readable GGUF"):
        LLM(str(bogus))

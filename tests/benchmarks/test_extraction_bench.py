"""The extraction benchmark end to end on one corpus PDF, with a tiny random model behind the real server:
three runs, their hit rates telling the prefix cache on from off, and one-at-a-time sending one call at a time."""

from __future__ import annotations

import json

import pytest

from benchmarks import extraction
from infrawiki.env import shared_dir
from tests.conftest import require
from tests.inference.conftest import build_tiny


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from inference.loader import resolve_model_path
    from inference.loader.tokenizer import load_gguf_tokenizer

    tokenizer = load_gguf_tokenizer(resolve_model_path("default"))
    # the extraction prompt (instructions and few-shot) runs past the tiny default of 512 positions
    folder = build_tiny(tmp_path_factory.mktemp("tiny-bench"), "qwen2", vocab_size=len(tokenizer), max_positions=4096)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_three_runs_report_papers_per_hour_tokens_and_the_prefix_cache_switch(tiny_model, tmp_path, capsys):
    pdfs = sorted((shared_dir() / "corpus" / "pdfs").glob("*.pdf"))
    require(bool(pdfs), "the shared corpus PDFs (../shared/corpus/pdfs)")
    (tmp_path / pdfs[0].name).symlink_to(pdfs[0])
    code = extraction.main(["--pdfs", str(tmp_path), "--max-papers", "1", "--model", str(tiny_model),
                            "--max-passages", "3", "--dtype", "float32", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["papers"] == [pdfs[0].name]
    for label in ("batched", "no_prefix_cache", "one_at_a_time"):
        run = out[label]
        assert run["papers"] == 1 and run["papers_per_hour"] > 0 and run["llm_requests"] == 3, run
        assert run["completion_tokens"] > 0 and run["llm_tokens_per_s"] > 0
    # every prompt starts with the same instructions: sent one at a time, the 2nd and 3rd calls of a
    # paper find them cached; with the cache switched off nothing is. Sent together, the three may be
    # admitted in one step, before any prefill has filled the cache, so their hit rate depends on timing.
    assert out["one_at_a_time"]["prefix_cache_hit_rate"] > 0.1
    assert 0 <= out["batched"]["prefix_cache_hit_rate"] <= 1
    assert out["no_prefix_cache"]["prefix_cache_hit_rate"] == 0
    assert out["one_at_a_time"]["max_concurrency"] == 1 and out["batched"]["max_concurrency"] == 3
    assert out["batched_vs_one_at_a_time"] > 0


def test_a_missing_pdf_folder_is_a_clear_error(tmp_path, capsys):
    assert extraction.main(["--pdfs", str(tmp_path / "nope")]) == 2
    assert "no PDF folder" in capsys.readouterr().err

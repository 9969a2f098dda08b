"""'Does this paper apply to me?': a paper's reported environment against a saved setup, aspect by aspect,
with how to try the idea on the person's engine release."""
from __future__ import annotations

from advisor.applicability import applicability

# The environment shape papers.pdf.environment reports for a paper evaluated on one A100-80GB with CUDA 12.1.
ENV = {"gpus": [{"model": "A100", "memory_gb": 80, "count": 1, "page": 11, "quote": "1 A100 80GB"}],
       "gpu_models": ["A100"], "cuda": ["12.1"], "pytorch": [], "engines": [{"name": "vLLM", "version": None}],
       "interconnects": []}
REPOS = [{"name": "some-lab/prototype", "url": "https://github.com/some-lab/prototype", "stars": 40, "pushed_at": None,
          "ci": False, "license": "MIT", "archived": False}]


def _verdicts(result: dict) -> dict[str, str]:
    return {a.name: a.verdict for a in result["aspects"]}


def test_the_same_setup_is_said_to_match_on_every_aspect_the_paper_reports():
    setup = {"gpu": "A100-SXM4-80GB", "gpu_count": 1, "cuda": "12.1", "engine": "vllm", "engine_version": "0.6.3",
             "model": "meta-llama/Llama-3.1-8B-Instruct"}
    result = applicability(setup, ENV, [8.0], ["chunked_prefill"], REPOS)
    assert _verdicts(result) == {"GPU": "same", "GPU memory": "same", "GPU count": "same", "CUDA": "same",
                                 "Engine": "similar", "Model size": "same"}
    assert result["summary"] == "The paper measured a setup like yours: its results should carry over."
    assert result["try"] == [{"technique": "chunked_prefill", "how": "flag", "engine": "vllm",
                              "flag": "--enable-chunked-prefill", "since": "0.5.1",
                              "source": "https://github.com/vllm-project/vllm/issues/7592"}]


def test_a_different_gpu_and_model_size_are_named_with_both_sides():
    setup = {"gpu": "L4", "gpu_count": 1, "cuda": "12.4", "engine": "vllm", "engine_version": "0.4.0",
             "model": "meta-llama/Llama-3.1-70B-Instruct"}
    result = applicability(setup, ENV, [7.0, 13.0], ["chunked_prefill", "paged_kv_cache"], REPOS)
    verdicts = _verdicts(result)
    assert verdicts["GPU"] == "different" and verdicts["GPU memory"] == "different"
    assert verdicts["CUDA"] == "similar" and verdicts["Model size"] == "different"
    memory = next(a for a in result["aspects"] if a.name == "GPU memory")
    assert (memory.paper, memory.yours) == ("80 GB", "24 GB")
    assert result["summary"].startswith("Your setup differs in GPU, GPU memory, Model size")
    how = {t["technique"]: t for t in result["try"]}
    assert how["chunked_prefill"]["how"] == "upgrade" and how["chunked_prefill"]["since"] == "0.5.1"
    assert how["paged_kv_cache"]["how"] == "built_in"


def test_an_idea_no_engine_ships_points_at_the_papers_repository_and_its_health():
    setup = {"gpu": "H100-SXM5-80GB", "engine": "vllm", "engine_version": "0.6.3"}
    result = applicability(setup, ENV, [], ["model_multiplexing"], REPOS)
    assert result["try"] == [{"technique": "model_multiplexing", "how": "repository", "repos": REPOS}]
    assert _verdicts(result)["GPU"] == "different" and _verdicts(result)["GPU memory"] == "same"


def test_a_paper_that_reports_no_environment_says_it_cannot_compare():
    result = applicability({"gpu": "L4"}, {}, [], [], [])
    assert result["summary"] == "The paper does not report enough of its setup to compare with yours."
    assert all(a.verdict == "unknown" for a in result["aspects"])

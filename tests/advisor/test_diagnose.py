"""Diagnose: a symptom in plain words -> techniques with engine flags, paper evidence and production
reports from crawled GitHub issues; text it cannot answer is said to be so."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rest_framework.test import APIClient

from advisor.diagnose import DiagnoseInputError, diagnose
from ontology.services import store_facts
from papers.models import CodeRepo, Paper
from papers.services.github import signals_from_issues
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db
ISSUES = json.loads((ROOT / "tests" / "data" / "github_issue_items.json").read_text())["items"]


def _fact(page: int, quote: str, parameter: str, effect: str) -> dict:
    return {"kind": "trade_off", "subject": "the system", "parameter": parameter, "value": None, "unit": None,
            "condition": None, "effect": effect, "page": page, "quote": quote, "confidence": 0.7, "extractor": "rules"}


@pytest.fixture
def knowledge(db):
    paged = Paper.objects.create(arxiv_id="2401.10001", title="Paging the KV cache")
    store_facts(paged, [
        _fact(4, "Memory fragmentation wastes most of the KV cache when each request reserves its maximum length.",
              "paged_kv_cache", "less waste at the cost of a block table lookup"),
        _fact(6, "A KV block is allocated on demand, so far more requests fit in GPU memory at once.",
              "block_size", "more concurrent requests at a small kernel overhead"),
    ])
    chunked = Paper.objects.create(arxiv_id="2401.10002", title="Chunking prefills")
    store_facts(chunked, [
        _fact(3, "A long prompt's prefill stalls every ongoing decode; chunked prefills bound the stall.",
              "chunk_size", "lower time between tokens at a small prefill overhead"),
        _fact(9, "With a token budget of 512, chunked prefills keep the p99 time between tokens low.",
              "chunk_size", "tail latency improves while throughput drops slightly"),
    ])
    repo = CodeRepo.objects.create(full_name="vllm-project/vllm", production_signals=signals_from_issues(ISSUES))
    return {"repo": repo}


def test_an_out_of_memory_symptom_names_the_paged_kv_cache_with_evidence_flags_and_reports(knowledge):
    result = diagnose("CUDA out of memory with many concurrent requests")
    assert result["answered"] is True and result["query"] == "CUDA out of memory with many concurrent requests"
    top = result["findings"][0]
    assert top["technique"] == "paged_kv_cache" and top["title"] == "Paged KV cache"
    assert top["evidence"][0]["paper"] == "2401.10001" and top["evidence"][0]["page"] in (4, 6)
    assert {r["issue"] for r in top["reports"]} >= {"https://github.com/vllm-project/vllm/issues/15942"}
    assert all(r["repo"] == "vllm-project/vllm" for r in top["reports"])
    assert set(top) == {"kind", "technique", "title", "why", "actions", "evidence", "reports"} and top["kind"] == "technique"


def test_a_latency_symptom_names_chunked_prefill_with_each_engines_flag_and_release(knowledge):
    result = diagnose("decode latency spikes whenever a long prompt arrives")
    top = result["findings"][0]
    assert top["technique"] == "chunked_prefill"
    assert {"engine": "vllm", "flag": "--enable-chunked-prefill", "since": "0.5.1", "direction": "set"}.items() <= next(
        a for a in top["actions"] if a["engine"] == "vllm").items()
    assert top["evidence"][0]["paper"] == "2401.10002"


def test_text_outside_serving_is_answered_as_unanswerable_not_with_the_nearest_technique(knowledge):
    result = diagnose("my printer keeps jamming on the second page")
    assert result["findings"] == [] and result["answered"] is False
    assert "does not match any serving symptom" in result["message"]
    assert "the engine version" in result["message"] and "the GPU model" in result["message"], "says what to send"


def test_empty_or_oversized_text_is_a_clear_input_error():
    with pytest.raises(DiagnoseInputError, match="describe the symptom"):
        diagnose("   ")
    with pytest.raises(DiagnoseInputError, match="at most 2000"):
        diagnose("out of memory " * 300)


def test_the_api_answers_the_same_shape_and_refuses_a_body_without_a_query(knowledge):
    client = APIClient()
    response = client.post("/api/diagnose", {"query": "requests keep getting preempted under load"}, format="json")
    assert response.status_code == 200
    assert response.json()["findings"][0]["technique"] == "continuous_batching"
    bad = client.post("/api/diagnose", {"text": "oops"}, format="json")
    assert bad.status_code == 400 and "query" in bad.json()["error"] and bad.json()["hint"]


def test_the_command_prints_json_and_exits_2_on_empty_text():
    done = subprocess.run([sys.executable, "manage.py", "diagnose", " "], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and json.loads(done.stdout.strip().splitlines()[-1])["hint"]


def test_a_symptom_naming_the_techniques_subject_counts_only_when_the_text_names_it_too():
    from advisor.diagnose import rank_techniques

    # ggml-cuda's "CUDA error %d at %s:%d: %s" line; before, multi-LoRA ranked second for it ("out of memory with
    # many adapters" shares its words)
    for text in ("CUDA error 2 at ggml-cuda.cu:1241: out of memory", "ggml-cuda.cu:1241: out of memory with many requests"):
        assert "multi_lora" not in [r["name"] for r in rank_techniques(text, strict=True)]
    with_adapters = rank_techniques("out of memory with many LoRA adapters on one GPU")
    assert "multi_lora" in [r["name"] for r in with_adapters][:3]

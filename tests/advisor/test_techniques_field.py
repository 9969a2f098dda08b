"""Every recommendation says which serving techniques it turns on or leaves off, why for this workload,
and what papers measured closest to the request (paper, page, quote)."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from advisor.services import recommend
from advisor.techniques import rank_evidence, techniques_for
from ontology.services import store_facts
from papers.models import Paper
from papers.services.extraction import extract_paper

SARATHI = "2403.02310"


def _normalised(**workload) -> dict:
    sla = workload.pop("sla", {})
    return {"gpu": "NVIDIA L4", "gpu_count": workload.pop("gpu_count", 1), "cuda": "12.4",
            "model": "Qwen/Qwen2.5-7B-Instruct",
            "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16, **workload},
            "sla": {"p95_ttft_ms": None, "p95_tpot_ms": None, "p95_latency_ms": None, **sla}}


def _vllm(**change) -> dict:
    rec = {"engine": "vllm", "engine_version": "0.6.3", "dtype": "bfloat16", "quantization": None,
           "kv_cache_dtype": None, "tensor_parallel_size": 1, "pipeline_parallel_size": 1,
           "flags": {"max_model_len": 8192}, "estimates": {"weights_gib": 14.2}}
    return {**rec, **change}


def _by_name(items: list[dict]) -> dict[str, dict]:
    return {item["name"]: item for item in items}


def test_long_prompts_under_a_tpot_sla_turn_chunked_prefill_on_with_the_flag_and_the_release_that_added_it():
    items = _by_name(techniques_for(_normalised(prompt_tokens=4096, sla={"p95_tpot_ms": 80}), _vllm()))
    chunked = items["chunked_prefill"]
    assert chunked["enabled"] is True and chunked["flag"] == "--enable-chunked-prefill"
    assert "4096-token prompts" in chunked["why"] and "since vllm 0.5.1" in chunked["why"]


def test_a_release_without_the_switch_leaves_chunked_prefill_off_and_says_which_release_adds_it():
    items = _by_name(techniques_for(_normalised(prompt_tokens=4096, sla={"p95_tpot_ms": 80}),
                                    _vllm(engine_version="0.4.0")))
    assert items["chunked_prefill"]["enabled"] is False
    assert "added it in 0.5.1" in items["chunked_prefill"]["why"]


def test_a_shared_prefix_turns_prefix_caching_on_and_without_one_it_stays_off():
    on = _by_name(techniques_for(_normalised(shared_prefix_tokens=900), _vllm()))["prefix_caching"]
    assert on["enabled"] is True and on["flag"] == "--enable-prefix-caching" and "900 of each request" in on["why"]
    off = _by_name(techniques_for(_normalised(), _vllm()))["prefix_caching"]
    assert off["enabled"] is False and "no shared prefix" in off["why"]


def test_speculative_decoding_must_stay_off_for_a_full_batch_and_is_suggested_for_one_latency_bound_stream():
    busy = _by_name(techniques_for(_normalised(concurrency=64, sla={"p95_tpot_ms": 50}), _vllm()))
    assert busy["speculative_decoding"]["enabled"] is False
    assert busy["speculative_decoding"]["why"].startswith("keep it off: 64 concurrent streams")
    alone = _by_name(techniques_for(_normalised(concurrency=1, sla={"p95_tpot_ms": 20}), _vllm()))
    assert alone["speculative_decoding"]["suggested"] is True and "one latency-bound stream" in \
        alone["speculative_decoding"]["why"]
    assert alone["chunked_prefill"]["enabled"] is False  # nothing for a prefill to stall


def test_many_adapters_turn_multi_lora_on_and_two_slas_at_scale_suggest_disaggregation():
    items = _by_name(techniques_for(
        _normalised(lora_adapters=12, concurrency=64, gpu_count=4, sla={"p95_ttft_ms": 500, "p95_tpot_ms": 60}),
        _vllm(tensor_parallel_size=2)))
    assert items["multi_lora"]["enabled"] is True and items["multi_lora"]["flag"] == "--enable-lora"
    disagg = items["prefill_decode_disaggregation"]
    assert disagg["enabled"] is False and disagg["suggested"] is True and disagg["why"].startswith("suggestion:")
    assert items["tensor_parallelism"]["enabled"] is True


def test_cuda_graphs_stay_off_when_the_configuration_needs_eager_mode():
    items = _by_name(techniques_for(_normalised(), _vllm(flags={"enforce_eager": True})))
    assert items["cuda_graphs"]["enabled"] is False and items["cuda_graphs"]["why"].startswith("keep it off")


def test_evidence_prefers_facts_measured_on_the_same_gpu_and_a_similar_model_size():
    base = {"technique": "chunked_prefill", "kind": "trade_off", "parameter": "chunk_size", "value_num": None,
            "verified": False, "names_technique": True, "environment": {}, "page": 3}
    rows = [
        {**base, "fact_id": 1, "paper": "2401.00001",
         "quote": "chunked prefills on 8 H100 GPUs with a 70B model keep decode latency stable"},
        {**base, "fact_id": 2, "paper": "2401.00002",
         "quote": "on one L4 GPU chunked prefills bound decode stalls for a 7B model at 4K tokens prompts"},
        {**base, "fact_id": 3, "paper": "2401.00001", "quote": "chunked prefills need a token budget per step"},
        {**base, "fact_id": 4, "paper": "2401.00002", "quote": "chunked prefill overhead is small for long prompts"},
        {**base, "fact_id": 5, "paper": "2401.00003", "quote": "0.1 0.2 0.3 0.4 0.5 chunked prefill 512 1024 2048"},
    ]
    ranked = rank_evidence(rows, _normalised(prompt_tokens=4096), _vllm())
    assert [r["fact_id"] for r in ranked][:2] == [2, 1]
    assert 5 not in [r["fact_id"] for r in ranked]  # figure axis labels are not a quote



def test_a_finding_outranks_the_caption_of_a_plot_measured_on_the_same_setup():
    base = {"technique": "chunked_prefill", "kind": "constraint", "parameter": "chunk_size", "value_num": None,
            "verified": False, "names_technique": True, "environment": {}, "page": 9, "paper": "2401.00001"}
    rows = [
        {**base, "fact_id": 1, "quote": "(a) Mistral-7B on one L4 with a chunked prefill token budget of 256."},
        {**base, "fact_id": 2, "quote": "Figure 7: Mistral-7B on one L4 GPU, chunked prefills, 4K token prompts."},
        {**base, "fact_id": 3, "quote": "Chunked prefills give 3.5x higher capacity under a strict SLO for Mistral-7B."},
    ]
    ranked = rank_evidence(rows, _normalised(prompt_tokens=4096), _vllm())
    assert [r["fact_id"] for r in ranked] == [3, 2, 1]

@pytest.mark.django_db
def test_evidence_quotes_the_facts_linked_to_the_technique_with_paper_and_page():
    paper = Paper.objects.create(arxiv_id="2401.00002", title="A chunking paper")
    store_facts(paper, [
        {"kind": "trade_off", "subject": "X", "parameter": "chunk_size", "value": None, "unit": None, "condition": None,
         "effect": "lower decode stalls at a small prefill cost", "page": 9, "confidence": 0.7, "extractor": "rules",
         "quote": "Chunked prefills let a decode batch run beside a long prompt without a stall."},
        {"kind": "trade_off", "subject": "X", "parameter": "chunk_size", "value": None, "unit": None, "condition": None,
         "effect": "lower time between tokens at a small throughput cost", "page": 10, "confidence": 0.7, "extractor": "rules",
         "quote": "A smaller token budget for chunked prefills lowers the time between tokens on an L4 GPU."},
    ])
    chunked = _by_name(techniques_for(_normalised(prompt_tokens=4096, sla={"p95_tpot_ms": 80}), _vllm()))
    evidence = chunked["chunked_prefill"]["evidence"]
    assert evidence == [{"paper": "2401.00002", "page": 10,
                         "quote": "A smaller token budget for chunked prefills lowers the time between tokens on an "
                                  "L4 GPU."}]


@pytest.mark.slow
@pytest.mark.xdist_group("corpus-ingest")  # shares the corpus PDFs' embeddings with the other ingests
@pytest.mark.django_db
def test_qwen_7b_on_one_l4_with_4k_prompts_and_an_80ms_tpot_sla_shows_chunked_prefill_quoting_a_paper_that_evaluates_it(
        corpus_dir):
    call_command("ingest_pdf", str(corpus_dir / "pdfs" / f"{SARATHI}.pdf"), arxiv_id=SARATHI)
    extract_paper(Paper.objects.get(arxiv_id=SARATHI).pk, use_llm=False)
    answer = recommend({"gpu": "L4", "gpu_count": 1, "model": "Qwen/Qwen2.5-7B-Instruct",
                        "workload": {"prompt_tokens": 4096, "output_tokens": 256, "concurrency": 8},
                        "sla": {"p95_tpot_ms": 80}})
    shown = [_by_name(r["techniques"]).get("chunked_prefill") for r in answer["recommendations"]]
    assert shown and all(shown)
    assert any(item["enabled"] for item in shown)
    for item in shown:
        assert item["evidence"] and item["evidence"][0]["paper"] == SARATHI
        assert item["evidence"][0]["page"] and 20 < len(item["evidence"][0]["quote"]) <= 300

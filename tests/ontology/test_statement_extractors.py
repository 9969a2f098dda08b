"""Generic statement patterns, parameter naming and the figure/table-text guard on quotes.

The sentences here are written for the tests (no corpus paper's text), in the shapes papers use.
"""
import pytest

from ontology.extraction.grounding import ground
from ontology.extraction.llm import LlmClient, LlmExtractor
from ontology.extraction.naming import name_quantity, snake
from ontology.extraction.rules import RULES, apply_rules
from ontology.extraction.statements import STATEMENT_RULES
from ontology.extraction.text import is_soup, sentences


def facts_of(text: str) -> dict[str, dict]:
    found = apply_rules(sentences([text]), "ExampleServe", RULES + STATEMENT_RULES)
    return {f["parameter"]: f for f in found}


def test_a_knob_outside_the_vocabulary_gets_a_coined_snake_case_name():
    facts = facts_of("We set the speculation lookahead window to 7 tokens for every request.")
    fact = facts["speculation_lookahead_window"]
    assert (fact["value"], fact["unit"], fact["kind"]) == ("7", "tokens", "parameter")


def test_a_phrase_the_vocabulary_knows_gets_the_canonical_name():
    assert name_quantity("TP degree").parameter == "tensor_parallel_size"
    assert name_quantity("head dimension").how == "vocabulary"
    assert snake("the average Inter-token ITL") == "inter_token_inter_token_latency"


def test_a_percentage_change_is_named_by_the_noun_phrase_it_changes():
    facts = facts_of("Offloading reduces the activation memory footprint by 41% on long prompts.")
    assert facts["activation_memory_footprint_reduction_pct"]["value"] == "41%"


def test_a_percentage_of_a_catalogue_metric_keeps_the_catalogue_name():
    facts = facts_of("Our scheduler cuts the end-to-end serving cost by up to 33%.")
    assert "cost_reduction_pct" in facts


def test_parallelism_degrees_of_every_kind_and_software_versions():
    facts = facts_of("Training uses 4-way expert parallelism and 2-way pipeline parallelism with FooLib v2.7.1.")
    assert facts["expert_parallel_size"]["value"] == "4"
    assert facts["pipeline_parallel_size"]["value"] == "2"
    assert facts["foolib_version"]["value"] == "2.7.1"


def test_precision_bits_context_length_and_slo_comparisons():
    facts = facts_of("Model weights are stored in FP8 precision. Each KV cache entry is quantized to 4 bits.")
    assert facts["weight_dtype"]["value"] == "FP8" and facts["kv_cache_bits"]["value"] == "4"
    facts = facts_of("The model supports a context length of 32K tokens and we keep TTFT below 300ms.")
    assert facts["max_seq_len"]["value"] == "32K"
    assert facts["slo_ttft_ms"]["value"] == "300ms"


def test_a_gpu_model_number_is_not_a_gpu_count():
    facts = facts_of("All runs use NVIDIA H100 80GB SXM GPUs and the 70B model runs on 4xH100.")
    assert facts["gpu_count"]["value"] == "4"


def test_figure_axis_text_is_soup_but_a_prose_list_of_numbers_is_not():
    assert is_soup("In contrast, vLLM can effectively 64 128 256 Context length 0 50 100 150 200")
    assert not is_soup("We try batch sizes of 32, 64, 128 and 256 in every configuration.")


def test_grounding_drops_a_fact_whose_quote_is_figure_text():
    page = "Throughput 0 50 100 150 200 Batch size 16 32 64 128 Figure 3: throughput against batch size."
    fact = {"kind": "parameter", "parameter": "batch_size", "value": "16", "page": 1,
            "quote": "0 50 100 150 200 Batch size 16 32 64 128"}
    kept, dropped = ground([fact], [page])
    assert not kept and dropped[0][1] == "quote is figure or table text"


def test_llm_concurrency_must_be_at_least_one():
    with pytest.raises(ValueError, match="max_concurrency"):
        LlmExtractor(LlmClient("http://127.0.0.1:9", "m"), max_concurrency=0)
    assert LlmExtractor(LlmClient("http://127.0.0.1:9", "m"), max_concurrency=1).max_concurrency == 1

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


def test_settings_stated_with_set_as_symbols_and_at_the_end_of_a_sentence():
    facts = facts_of("For the warm-up stage the retry interval is set as 12.")
    assert facts["retry_interval"]["value"] == "12"
    facts = facts_of("We configure the probe stride s = 8, and the probe group width w = 24.")
    assert facts["probe_stride"]["value"] == "8"
    assert facts["probe_group_width"]["value"] == "24"
    facts = facts_of("To reach a good balance we set the pooling width to 48 and the stride to 6.")
    assert facts["pooling_width"]["kind"] == "parameter" and facts["stride"]["value"] == "6"


def test_a_number_of_things_is_a_count_and_a_scientific_constant_is_not_a_knob_value():
    facts = facts_of("During serving, the number of retrieved pages is set to 24.")
    assert facts["num_retrieved_pages"]["value"] == "24"
    facts = facts_of("We use a decay rate of 3e-4 and a warm-up rate of 2 × 10−3 for every run.")
    assert "decay_rate" not in facts and "warm_up_rate" not in facts


def test_context_lengths_with_a_k_suffix_and_software_releases_without_a_v():
    facts = facts_of("The context window is extended from 8K to 64K during the last stage.")
    assert facts["max_seq_len"]["value"] == "64K"
    facts = facts_of("The system is built on FooServe 1.7.2 and Python 3.11.")
    assert facts["fooserve_version"]["value"] == "1.7.2"
    assert facts["python_version"]["value"] == "3.11"
    facts = facts_of("Section 4.2 built the model Llama 3.1 70B.")
    assert not any(name.endswith("_version") for name in facts)


def test_a_named_model_size_and_a_gpu_count_that_is_not_a_byte_count():
    facts = facts_of("We compare against Zeta4-14B on the same hardware.")
    assert facts["model_size_b"]["value"] == "14"
    facts = facts_of("A cache line is 128 bytes for NVIDIA GPUs.")
    assert "gpu_count" not in facts


def test_percentage_levels_and_overheads_are_named_by_their_noun_phrase():
    facts = facts_of("The scheduler keeps link utilization above 90% with only 3% scheduling overhead.")
    assert facts["link_utilization_pct"]["value"] == "90%"
    assert facts["scheduling_overhead_pct"]["value"] == "3%"
    facts = facts_of("Our method reaches a cache hit rate of 85% on the chat trace.")
    assert facts["kv_cache_reuse_pct"]["value"] == "85%"


def test_every_size_of_a_model_family_list_and_a_node_count():
    facts = apply_rules(sentences(["We evaluate OPT-13B, 66B and 175B on a 4-node cluster."]), "S", RULES + STATEMENT_RULES)
    assert {f["value"].removesuffix("B") for f in facts if f["parameter"] == "model_size_b"} == {"13", "66", "175"}
    assert [f["value"] for f in facts if f["parameter"] == "num_nodes"] == ["4"]


def test_choices_stated_in_words_scheduling_order_preemption_and_draft_model():
    facts = facts_of("Requests are served in first-come-first-serve order by the scheduler.")
    assert facts["scheduling_policy"]["value"] == "first-come-first-serve"
    facts = facts_of("When memory runs out, the engine preempts requests by recomputation.")
    assert facts["preemption_mode"]["value"] == "recomputation"
    facts = facts_of("We use Tiny-42M as the draft model for every run.")
    assert facts["draft_model"]["value"] == "Tiny-42M"


def test_a_trade_off_sentence_names_a_knob_outside_the_catalogue_by_its_noun_phrase():
    from ontology.extraction.tradeoffs import knob_phrases, trade_off_candidates

    text = "A larger expert capacity factor reduces token dropping but raises memory use and latency."
    assert knob_phrases(text) == ["expert_capacity_factor"]
    assert trade_off_candidates(sentences([text]))[0].parameters == ["expert_capacity_factor"]
    assert knob_phrases("Forward passes are of consistent size and the total length varies.") == []


def test_a_release_is_not_a_section_number_or_a_score_and_host_memory_follows_the_cpu():
    facts = facts_of("We run every experiment with Ubuntu 22.04 on the cluster.")
    assert facts["ubuntu_version"]["value"] == "22.04"
    for text in ("We use the setup of Background 2.1 Serving for the runs.", "Using the Easy 66.1 split as a score.",
                 "In Subsection 5.3, we use the implementation details."):
        assert not any(name.endswith("_version") for name in facts_of(text)), text
    facts = facts_of("Each server has two Xeon CPUs with 512 GB memory.")
    assert facts["host_memory_gb"]["value"] == "512"


def test_ratios_in_multiples_draft_tokens_expert_counts_and_wxay_bits():
    facts = facts_of("The KV cache compression ratio reaches 8× on long prompts.")
    assert facts["kv_cache_compression_ratio"]["value"] == "8×"
    assert facts_of("The model proposes 4 draft tokens per step.")["num_speculative_tokens"]["value"] == "4"
    facts = facts_of("Each layer has 64 routed experts and 2 shared experts.")
    assert (facts["num_routed_experts"]["value"], facts["num_shared_experts"]["value"]) == ("64", "2")
    facts = facts_of("We quantize the model to W4A16 before serving.")
    assert (facts["weight_bits"]["value"], facts["activation_bits"]["value"]) == ("4", "16")


def test_a_change_stated_as_a_reduction_in_a_metric_or_by_a_factor():
    assert facts_of("We measure a 12% reduction in TTFT.")["ttft_reduction_pct"]["value"] == "12%"
    facts = facts_of("Offloading reduces the activation footprint by 2.5× on long prompts.")
    assert facts["activation_footprint_reduction"]["value"] == "2.5×"
    facts = facts_of("It reduces the end-to-end delay by up to 40% against the baseline.")
    assert facts["end_to_end_delay_reduction_pct"]["value"] == "40%"


def test_a_count_turned_up_is_the_knob_of_a_trade_off_without_a_comparative_cue():
    from ontology.extraction.tradeoffs import knob_phrases, rule_trade_offs, trade_off_candidates

    text = "Increasing the number of micro-kernels also shrinks each kernel's batch and hurts performance."
    assert knob_phrases(text) == ["num_micro_kernels"]
    facts = rule_trade_offs(trade_off_candidates(sentences([text])), "Sys")
    assert [(f["kind"], f["parameter"]) for f in facts] == [("trade_off", "num_micro_kernels")]
    assert knob_phrases("The number of kernels is fixed by the compiler.") == []


def test_a_share_of_a_whole_and_amounts_in_gb_or_ms_are_named_as_annotators_name_them():
    facts = facts_of("We run every test with the arrival rate set to 70% of the peak capacity.")
    assert (facts["arrival_rate_pct_of_capacity"]["kind"], facts["arrival_rate_pct_of_capacity"]["value"]) == ("parameter", "70%")
    facts = facts_of("The staging buffer capacity is set to 4 GB on every node.")
    assert (facts["staging_buffer_capacity_gb"]["kind"], facts["staging_buffer_capacity_gb"]["value"]) == ("parameter", "4")
    facts = facts_of("The polling interval is 5 ms in all runs.")
    assert facts["polling_interval_ms"]["value"] == "5"
    assert not facts_of("Decoding accounts for 70% of the total time.")

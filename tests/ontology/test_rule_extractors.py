"""Rule extractors find the regular facts in the field's usual phrasing (written sentences, not corpus ones)."""
from __future__ import annotations

import pytest

from ontology.extraction.improvements import extract_improvements
from ontology.extraction.pipeline import export_facts, extract_document
from ontology.extraction.rules import apply_rules
from ontology.extraction.text import sentences
from ontology.extraction.tradeoffs import rule_trade_offs, trade_off_candidates
from papers.pdf import ParsedPdf


def found(text: str) -> set[tuple[str, str, str]]:
    units = sentences([text])
    facts = apply_rules(units, "Sys") + extract_improvements(units, "Sys", "throughput_speedup")
    return {(f["kind"], f["parameter"], f["value"]) for f in facts}


@pytest.mark.parametrize(("text", "expected"), [
    ("Experiments run on 4 NVIDIA H100 GPUs.", ("constraint", "gpu_count", "4")),
    ("Each node has an A100 GPU with 80GB memory.", ("constraint", "gpu_memory_gb", "80")),
    ("We use CUDA 12.4 and PyTorch 2.3.1 throughout.", ("constraint", "cuda_version", "12.4")),
    ("We use CUDA 12.4 and PyTorch 2.3.1 throughout.", ("constraint", "pytorch_version", "2.3.1")),
    ("We compare against the v0.5.3 version of vLLM.", ("constraint", "vllm_version", "0.5.3")),
    ("We serve Llama-3-70B on the cluster.", ("constraint", "model_size_b", "70")),
    ("We set the KV cache block size to 32 for all runs.", ("parameter", "block_size", "32")),
    ("A chunk size of 256 keeps decode stalls short.", ("parameter", "chunk_size", "256")),
    ("The maximum batch size is 64.", ("parameter", "max_batch_size", "64")),
    ("We run the model with TP=8 on one node.", ("parameter", "tensor_parallel_size", "8")),
    ("The TTFT SLO is set to 0.5s for chat.", ("parameter", "slo_ttft_ms", "0.5s")),
    ("Nodes are linked by 400 Gbps InfiniBand.", ("constraint", "network_bandwidth_gbps", "400")),
    ("It achieves 3.1× higher throughput than the baseline.", ("constraint", "throughput_speedup", "3.1×")),
    ("The system sustains 1.5-2× higher request rates.", ("constraint", "request_rate_speedup", "1.5-2×")),
    ("It reduces the time to first token by up to 40%.", ("constraint", "ttft_reduction_pct", "40%")),
])
def test_a_regular_statement_becomes_a_typed_fact(text, expected):
    assert expected in found(text)


def test_a_list_of_values_gives_one_fact_each():
    facts = found("We use a token budget of 1024 and 4096 in the two settings.")
    assert {("parameter", "chunk_size", "1024"), ("parameter", "chunk_size", "4096")} <= facts


def test_a_knob_value_stated_as_a_capability_is_a_constraint():
    assert ("constraint", "max_batch_size", "48") in found("Our system can accommodate a maximum batch size of 48.")


def test_axis_ticks_are_not_settings():
    assert not any(p == "block_size" for _, p, _ in found("Block size 0 20 40 60 80"))


def test_a_trade_off_sentence_naming_a_knob_becomes_a_trade_off():
    units = sentences(["Raising the chunk size improves throughput at the cost of higher decode latency."])
    facts = rule_trade_offs(trade_off_candidates(units), "Sys")
    assert [f["parameter"] for f in facts] == ["chunk_size"]
    assert facts[0]["kind"] == "trade_off" and facts[0]["effect"]


def test_a_pronoun_sentence_takes_the_knob_of_the_sentence_before():
    units = sentences(["Pipeline parallelism splits layers across GPUs. It saves memory but adds pipeline idle time."])
    candidates = trade_off_candidates(units)
    assert candidates and candidates[0].parameters == ["pipeline_parallel_size"]


def test_the_whole_pipeline_reports_grounded_facts_in_the_exchange_format():
    page = ("Sys: fast serving. We present Sys, a serving engine. We run on 8 A100 GPUs with CUDA 11.8. "
            "The TTFT SLO is set to 0.2s. Sys improves throughput by 2-4× over the baseline.")
    result = extract_document(ParsedPdf.from_pages([page], title="Sys: fast serving"))
    facts = export_facts(result.facts)
    assert result.subject == "Sys"
    slo = next(f for f in facts if f["parameter"] == "slo_ttft_ms")
    assert (slo["value"], slo["unit"]) == ("200", "ms")  # converted, as FACTS_FORMAT wants
    assert {f["parameter"] for f in facts} >= {"gpu_count", "cuda_version", "throughput_speedup"}
    assert all(set(f) == {"kind", "subject", "parameter", "value", "unit", "condition", "effect", "page", "quote",
                          "confidence", "extractor"} for f in facts)


def test_fold_speedups_and_lower_latency_multipliers_are_headline_numbers():
    assert ("constraint", "throughput_speedup", "3") in found("Our system brings a 3-fold speed improvement.")
    assert ("constraint", "inference_speedup", "2.5×") in found("It reaches 2.5× lower end-to-end latency than the baseline.")


def test_a_trade_off_with_a_cost_word_and_a_knob_needs_no_metric_word():
    units = sentences(["In deployment, this large cache is a bottleneck that limits the maximum batch size."])
    assert [c.parameters for c in trade_off_candidates(units)] == [["max_batch_size"]]
    units = sentences(["PP has a better compute ratio than TP, but can suffer from pipeline bubbles across stages."])
    assert trade_off_candidates(units), "pipeline bubbles are a cost"


def test_a_multiplier_takes_the_metric_right_after_it():
    facts = found("It achieves 2.1× prefilling speedup and 2.6× decoding speedup.")
    assert ("constraint", "prefill_throughput_speedup", "2.1×") in facts
    assert ("constraint", "decoding_speedup", "2.6×") in facts


@pytest.mark.parametrize(("text", "expected"), [
    ("Each VM has 4 NVIDIA H100s with 80GB memory.", ("constraint", "gpu_count", "4")),
    ("The model is sharded across 4 GPUs with tensor parallelism.", ("parameter", "tensor_parallel_size", "4")),
])
def test_gpu_counts_by_plural_model_name_and_tensor_parallelism_across_gpus(text, expected):
    assert expected in found(text)


def test_every_size_of_an_enumerated_list_and_a_thousands_separator_is_one_number():
    facts = found("We vary the batch sizes of 8, 16, and 32 across runs. We use chunk sizes of 512, 1024 and 2,048 tokens.")
    assert {v for _, p, v in facts if p == "batch_size"} == {"8", "16", "32"}
    assert {v for _, p, v in facts if p == "chunk_size"} == {"512", "1024", "2,048"}
    assert ("parameter", "max_batch_size", "1,024") in found("The maximum batch size is 1,024.")


@pytest.mark.parametrize(("name", "kind"), [
    ("block_size", "parameter"),  # a catalogue name: its template decides
    ("prefetch_queue_size", "parameter"), ("reader_threads", "parameter"), ("slo_queueing_ms", "parameter"),
    ("arrival_rate_pct_of_capacity", "parameter"), ("encoder_speedup", "constraint"), ("spill_memory_gb", "constraint"),
    ("triton_server_version", "constraint"), ("lookup_hit_rate", "constraint"), ("head_count", None),
])
def test_a_name_outside_the_catalogue_says_its_kind_by_its_shape(name, kind):
    from ontology.vocabulary import kind_of_name

    assert kind_of_name(name) == kind


def test_an_uncatalogued_count_is_a_parameter_when_the_sentence_sets_it():
    # "readers" is no catalogue knob: the sentence's setting verb, not a default, makes it a parameter
    from ontology.extraction.rules import _rule

    rule = _rule("readers", r"(?P<v>\d+) reader processes", "num_reader_processes")
    set_it = apply_rules(sentences(["We use 12 reader processes for loading."]), "Sys", [rule])
    measured = apply_rules(sentences(["The host runs 12 reader processes in total."]), "Sys", [rule])
    assert [f["kind"] for f in set_it] == ["parameter"]
    assert [f["kind"] for f in measured] == ["constraint"]


def test_a_swept_count_is_a_parameter_and_memory_in_brackets_is_no_gpu_count():
    assert ("parameter", "num_clients", "1 to 32") in found("We instantiate multiple clients (ranging from 1 to 32) at once.")
    assert not any(f[1] == "num_values" for f in found("We try values ranging from 1 to 4."))
    gpus = {f for f in found("Serving it requires eight A100 (80GB) GPUs and 4 H100 GPUs.") if f[1] == "gpu_count"}
    assert gpus == {("constraint", "gpu_count", "4")}

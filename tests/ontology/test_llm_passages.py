"""The LLM extractor's parts that need no model: which passages it reads, how its facts are grounded
(and the drops counted), how its parameter names meet the vocabulary, and the prompt files."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from ontology.extraction import llm as llm_module
from ontology.extraction import naming
from ontology.extraction.llm import EXAMPLES, LlmFact, load_prompt, parameter_name
from ontology.extraction.passages import Passage, select_passages
from ontology.extraction.pipeline import extract_document
from ontology.extraction.text import sentences
from papers.pdf.model import Caption, ParsedPdf, ParsedSection, ParsedTable
from tests.conftest import ROOT

INTRO = ("Large language models are changing how people write software and search for information today. "
         "Serving them is expensive because every request needs memory for its cache.")
SETUP = ("We run every experiment on a server with 8 NVIDIA A100 GPUs with 80 GB of memory each. "
         "The block size is set to 16 tokens and the batch size to 32 requests by default.")
REFS = "[1] A. Author. Serving systems with 8 GPUs and 80 GB of memory each. In OSDI, 2023."


def _document() -> ParsedPdf:
    pages = [INTRO, SETUP + " Figure 2: Throughput of the system on 4 GPUs with a batch size of 64.", REFS]
    cells = [["Model", "GPUs", "Memory"], ["OPT-13B", "1", "40 GB"], ["✗", "✓", "✗ ✗ ✓"]]
    return ParsedPdf(
        title="", abstract="", page_texts=pages, page_count=3, environment={},
        sections=[ParsedSection("1 Introduction", "1", 1, 1, 1, INTRO),
                  ParsedSection("5 Experimental Setup", "5", 1, 2, 2, SETUP),
                  ParsedSection("References", "", 1, 3, 3, REFS)],
        tables=[ParsedTable(2, "Table 1: Models and GPUs", 3, 3, cells)],
        captions=[Caption("figure", "Figure 2", 2, "Figure 2: Throughput of the system on 4 GPUs with a batch size of 64.")],
    )


def test_setup_sentences_captions_and_table_rows_are_chosen_and_the_references_never():
    document = _document()
    chosen = select_passages(document, sentences(document.page_texts), limit=10)
    texts = [p.text for p in chosen]
    assert {p.source for p in chosen} == {"section", "caption", "table"}
    assert any(t.startswith("We run every experiment") for t in texts)
    assert "Table 1 (p. 2), OPT-13B: GPUs 1; Memory 40 GB" in texts  # the row with its header
    assert not any("✗" in t for t in texts)  # a row of ticks gives no sentence
    assert all(p.page != 3 for p in chosen)  # references
    assert not any(t.startswith("Large language models") for t in texts)  # states no quantity: score 0
    assert [p.page for p in chosen] == sorted(p.page for p in chosen)


def test_the_bound_keeps_the_best_scored_passages():
    document = _document()
    everything = select_passages(document, sentences(document.page_texts), limit=10)
    best_two = select_passages(document, sentences(document.page_texts), limit=2)
    assert len(best_two) == 2 < len(everything)
    assert min(p.score for p in best_two) >= max(p.score for p in everything if p not in best_two)


class _FakeLlm:
    """Stands in for LlmExtractor: states fixed facts for the pipeline to ground."""

    def __init__(self, facts: list[dict]) -> None:
        self.facts = facts

    def extract(self, document, units, subject):
        return [dict(f) for f in self.facts], []


def _llm_fact(parameter: str, value: str | None, quote: str, kind: str = "constraint") -> dict:
    return {"kind": kind, "subject": "Sys", "parameter": parameter, "value": value, "unit": None,
            "condition": None, "effect": None, "page": 2, "quote": quote, "confidence": 0.5, "extractor": "llm"}


def test_llm_facts_that_do_not_ground_are_dropped_and_counted():
    stated = [_llm_fact("gpu_count", "8", "a server with 8 NVIDIA A100 GPUs"),
              _llm_fact("gpu_count", "16", "a server with 16 NVIDIA A100 GPUs"),  # quote not in the PDF
              _llm_fact("gpu_memory_gb", "96", "8 NVIDIA A100 GPUs with 80 GB")]  # value not in the quote
    result = extract_document(_document(), llm=_FakeLlm(stated))
    assert result.stats["llm_facts_stated"] == 3
    assert result.stats["llm_dropped_ungrounded"] == 2
    llm_facts = [f for f in result.facts if "llm" in f["extractor"]]
    assert [(f["parameter"], f["value"]) for f in llm_facts] == [("gpu_count", "8")]


def test_a_merged_duplicate_keeps_the_shorter_telling_quote():
    long_quote = "We run every experiment on a server with 8 NVIDIA A100 GPUs with 80 GB of memory each."
    result = extract_document(_document(), llm=_FakeLlm([_llm_fact("gpu_count", "8", "a server with 8 NVIDIA A100 GPUs"),
                                                         {**_llm_fact("gpu_count", "8", long_quote), "confidence": 0.9}]))
    merged = [f for f in result.facts if (f["parameter"], f["value"], f["page"]) == ("gpu_count", "8", 2)]
    assert len(merged) == 1 and merged[0]["quote"] == "a server with 8 NVIDIA A100 GPUs"
    assert merged[0]["extractor"] == "llm+rules"


def test_parameter_names_go_vocabulary_then_the_quote_then_embedding_then_coined(monkeypatch):
    assert parameter_name("tp_degree", "we shard it") == naming.Name("tensor_parallel_size", "vocabulary")
    assert parameter_name("size_per_page", "the block size is 16") == naming.Name("block_size", "vocabulary")
    naming.name_quantity.cache_clear()
    monkeypatch.setattr(naming, "nearest_catalogue_entry", lambda phrase: ("swap_space_gb", 0.9))
    assert parameter_name("host_swap_room", "we reserve room on the host") == naming.Name("swap_space_gb", "embedding")
    monkeypatch.setattr(naming, "nearest_catalogue_entry", lambda phrase: ("swap_space_gb", 0.3))
    naming.name_quantity.cache_clear()
    assert parameter_name("frobnication_depth", "the depth is 3") == naming.Name("frobnication_depth", "coined")
    naming.name_quantity.cache_clear()


def test_the_naming_of_each_llm_fact_is_counted():
    counts: Counter[str] = Counter()
    passage = Passage(2, "section", "The block size is set to 16 tokens.", 5.0)
    answer = LlmFact(quote="The block size is set to 16 tokens", kind="parameter", parameter="block_size",
                     value="16", unit="tokens", condition="", effect="", subject="")
    fact = llm_module.fact_of(answer, passage, "Sys", counts)
    assert (fact["parameter"], fact["value"], fact["subject"], fact["extractor"]) == ("block_size", "16", "Sys", "llm")
    assert counts == Counter({"vocabulary": 1})


def test_the_prompt_is_read_from_its_files_with_development_examples_only(shared_dir):
    prompt = load_prompt()
    instructions = (ROOT / "ontology" / "prompts" / "facts.txt").read_text().strip()
    assert prompt.system.startswith(instructions)
    splits = json.loads((ROOT / "tests" / "data" / "papers" / "splits.json").read_text())
    validation = {name.removesuffix(".pdf") for name in splits["validation"]}
    development = {name.removesuffix(".pdf") for name in splits["development"]}
    shared_dev = {json.loads(line)["paper"] for line in
                  (shared_dir / "eval" / "gold_facts_dev.jsonl").read_text().splitlines() if line.strip()}
    examples = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]
    assert 2 <= len(examples) <= 6
    for example in examples:
        assert example["paper"] not in validation
        assert example["paper"] in development | shared_dev
        assert example["passage"] in prompt.system
        for fact in example["answer"]["facts"]:
            assert fact["quote"] in example["passage"]  # the examples teach copying, so they copy
            assert fact["value"] in fact["quote"]


def test_a_broken_example_is_refused_when_the_prompt_loads(tmp_path):
    instructions = tmp_path / "facts.txt"
    instructions.write_text("List the facts.")
    examples = tmp_path / "examples.jsonl"
    examples.write_text(json.dumps({"paper": "x", "page": 1, "passage": "p", "answer": {"facts": [{"kind": "nope"}]}}))
    with pytest.raises(ValueError):
        load_prompt(instructions, examples)


def test_a_parse_result_itself_can_be_read_for_passages():
    from papers.pdf.model import Caption, ParsedPdf, ParsedSection, ParsedTable

    document = _document()
    parsed = ParsedPdf(title="", abstract="", page_texts=document.page_texts, page_count=3, environment={},
                       sections=[ParsedSection(s.title, "", 1, s.page_start, s.page_end, "") for s in document.sections],
                       tables=[ParsedTable(t.page, t.caption, len(t.cells), 3, t.cells) for t in document.tables],
                       captions=[Caption(c.kind, c.label, c.page, c.text) for c in document.captions])
    units = sentences(document.page_texts)
    assert select_passages(parsed, units, limit=10) == select_passages(document, units, limit=10)


def test_the_vocabulary_decides_constraint_or_parameter_but_a_trade_off_stays_one():
    passage = Passage(1, "section", "vLLM improves throughput by up to 4x over the baseline.", 5.0)
    stated = LlmFact(quote="improves throughput by up to 4x", kind="parameter", parameter="throughput_speedup",
                     value="4x", unit="x", condition="", effect="", subject="")
    assert llm_module.fact_of(stated, passage, "vLLM", Counter())["kind"] == "constraint"
    trade = stated.model_copy(update={"kind": "trade_off", "effect": "more throughput, more memory"})
    fact = llm_module.fact_of(trade, passage, "vLLM", Counter())
    assert (fact["kind"], fact["value"], fact["effect"]) == ("trade_off", None, "more throughput, more memory")

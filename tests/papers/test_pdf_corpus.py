"""Every corpus PDF parses into the right title, an abstract, an introduction, at least five
sections with sane page ranges, its tables, and the environment its experiments report.

Expectations were written by reading each PDF (titles as printed; tables = ruled data tables).
"""
from __future__ import annotations

import pytest

from papers.pdf import ParsedPdf
from papers.pdf.structure import norm

# arxiv id -> (title, tables found at least: the captioned data tables detected today — S-LoRA's
# Table 5, the survey's one-row Table 4 and DistServe's Table 2 are not — and environment facts)
EXPECTED: dict[str, tuple[str, int, dict]] = {
    "2309.06180": ("Efficient Memory Management for Large Language Model Serving with PagedAttention", 1,
                   {"gpu_models": {"A100"}}),
    "2311.03285": ("S-LoRA: Serving Thousands of Concurrent LoRA Adapters", 4, {"gpu_models": {"A100", "A10G"}}),
    "2312.11514": ("LLM in a flash: Efficient Large Language Model Inference with Limited Memory", 7,
                   {"gpu_models": {"RTX4090"}}),
    "2401.07851": ("Unlocking Efficiency in Large Language Model Inference: A Comprehensive Survey of "
                   "Speculative Decoding", 5, {"gpu_models": {"A100", "RTX3090"}, "cuda": {"11.4", "11.8"}}),
    "2401.08671": ("DeepSpeed-FastGen: High-throughput Text Generation for LLMs via MII and DeepSpeed-Inference",
                   0, {"gpu_models": {"A100", "H100", "A6000"}}),
    "2401.09670": ("DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large Language Model "
                   "Serving", 1, {"gpu_models": {"A100"}, "interconnects": {"NVLink"}}),
    "2403.02310": ("Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve", 4,
                   {"gpu_models": {"A100", "A40"}, "cuda": {"12.1"}}),
    "2403.19708": ("AttentionStore: Cost-effective Attention Reuse across Multi-turn Conversations in Large "
                   "Language Model Serving", 2, {"gpu_models": {"A100"}}),
    "2404.02015": ("MuxServe: Flexible Spatial-Temporal Multiplexing for Multiple LLM Serving", 1,
                   {"gpu_models": {"A100"}, "interconnects": {"NVLink"}}),
    "2407.00079": ("Mooncake: A KVCache-centric Disaggregated Architecture for LLM Serving", 3,
                   {"gpu_models": {"A800"}, "interconnects": {"NVLink", "RDMA"}}),
    "2407.15309": ("vTensor: Flexible Virtual Tensor Management for Efficient LLM Serving", 1,
                   {"gpu_models": {"A100"}}),
    "2408.04275": ("DistTrain: Addressing Model and Data Heterogeneity with Disaggregated Training for "
                   "Multimodal Large Language Models", 2, {"gpu_models": {"A800"}, "cuda": {"12.2"},
                                                          "pytorch": {"2.1.2"}}),
    "2408.12757": ("NanoFlow: Towards Optimal Large Language Model Serving Throughput", 3, {"gpu_models": {"A100"}}),
}


@pytest.fixture(params=sorted(EXPECTED))
def paper(request, parsed_corpus: dict[str, ParsedPdf]) -> tuple[str, ParsedPdf]:
    assert request.param in parsed_corpus, f"corpus PDF {request.param}.pdf is missing"
    return request.param, parsed_corpus[request.param]


def test_every_corpus_pdf_has_an_expectation(parsed_corpus: dict[str, ParsedPdf]) -> None:
    assert set(parsed_corpus) == set(EXPECTED)


def test_the_title_is_the_printed_title(paper) -> None:
    arxiv_id, parsed = paper
    assert norm(parsed.title) == norm(EXPECTED[arxiv_id][0])


def test_the_abstract_is_found_and_stops_before_the_introduction(paper) -> None:
    _, parsed = paper
    assert 400 < len(parsed.abstract) < 3000
    assert "introduction" not in parsed.abstract.casefold()[-200:]


def test_there_is_an_introduction_and_at_least_five_sections(paper) -> None:
    _, parsed = paper
    titles = [s.title.casefold() for s in parsed.sections]
    assert any("introduction" in t for t in titles[:2]), titles[:3]
    assert len(parsed.sections) >= 5
    start = next(i for i, s in enumerate(parsed.sections) if "introduction" in s.title.casefold())
    following = parsed.sections[start + 1:]
    body = [parsed.sections[start]] + following[: next((i for i, s in enumerate(following) if s.level == 1), len(following))]
    assert sum(len(s.text) for s in body) > 1000  # with its subsections (Mooncake opens with 1.1)


def test_section_pages_are_in_order_and_inside_the_document(paper) -> None:
    _, parsed = paper
    starts = [s.page_start for s in parsed.sections]
    assert starts == sorted(starts)
    for section in parsed.sections:
        assert 1 <= section.page_start <= section.page_end <= parsed.page_count


def test_references_are_a_section_of_their_own_when_the_paper_has_them(paper) -> None:
    _, parsed = paper
    references = [s for s in parsed.sections if s.title.casefold() in {"references", "bibliography"}]
    if references:
        before = parsed.sections[parsed.sections.index(references[0]) - 1]
        assert len(before.text) < 6000, f"{before.title} swallowed the references"


def test_tables_are_found_with_their_page_cells_and_caption(paper) -> None:
    arxiv_id, parsed = paper
    assert len(parsed.tables) >= EXPECTED[arxiv_id][1]
    for table in parsed.tables:
        assert table.n_rows >= 2 and table.n_cols >= 2
        assert len(table.cells) == table.n_rows
        assert table.caption.startswith("Table")
        assert 1 <= table.page <= parsed.page_count


def test_the_reported_environment_is_found(paper) -> None:
    arxiv_id, parsed = paper
    for key, expected in EXPECTED[arxiv_id][2].items():
        assert expected <= set(parsed.environment[key]), (key, parsed.environment[key])
    for gpu in parsed.environment["gpus"]:
        assert gpu["quote"] and 1 <= gpu["page"] <= parsed.page_count


def test_gpu_counts_and_memory_come_from_the_setup_sentence(parsed_corpus: dict[str, ParsedPdf]) -> None:
    muxserve = parsed_corpus["2404.02015"].environment["gpus"]
    assert {"model": "A100", "memory_gb": 80, "count": 8} in [
        {k: g[k] for k in ("model", "memory_gb", "count")} for g in muxserve]
    mooncake = parsed_corpus["2407.00079"].environment["gpus"]
    assert any(g["model"] == "A800" and g["count"] == 8 and g["memory_gb"] == 80 for g in mooncake)


def test_figure_and_table_captions_are_collected(parsed_corpus: dict[str, ParsedPdf]) -> None:
    vllm = parsed_corpus["2309.06180"]
    labels = {c.label for c in vllm.captions}
    assert {"Figure 1", "Table 1"} <= labels
    assert all(c.text.startswith(("Figure", "Fig", "Table", "TABLE", "FIGURE")) for c in vllm.captions)


def test_the_arxiv_stamp_gives_id_and_version(parsed_corpus: dict[str, ParsedPdf]) -> None:
    assert (parsed_corpus["2309.06180"].arxiv_id, parsed_corpus["2309.06180"].arxiv_version) == ("2309.06180", 1)
    assert parsed_corpus["2311.03285"].arxiv_id is None  # the MLSys print has no stamp


def test_pdfs_without_an_outline_use_font_and_numbering_rules(parsed_corpus: dict[str, ParsedPdf]) -> None:
    slora = parsed_corpus["2311.03285"]
    assert not slora.outline_used
    numbers = [s.number for s in slora.sections if s.number.isdigit()]
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)]


def test_table_cells_hold_the_printed_values(parsed_corpus: dict[str, ParsedPdf]) -> None:
    (table,) = parsed_corpus["2309.06180"].tables  # vLLM's Table 1: model sizes and server configurations
    assert table.page == 9 and (table.n_rows, table.n_cols) == (6, 4)  # "GPUs" and "Total GPU memory" share no rule
    assert table.cells[0][1:] == ["13B", "66B", "175B"]
    assert table.cells[1] == ["GPUs", "A100", "4×A100", "8×A100-80GB"]
    assert table.cells[2] == ["Total GPU memory", "40 GB", "160 GB", "640 GB"]  # spaced as printed

"""A table row read as a sentence pairs each cell with its own column's header, on real tables parsed from corpus PDFs."""
from __future__ import annotations

from pathlib import Path

import pytest

from papers.pdf import parse_pdf
from papers.pdf.table_rows import table_rows


@pytest.fixture(scope="module")
def tables(corpus_dir: Path) -> dict[str, list]:
    return {name: parse_pdf(corpus_dir / "pdfs" / f"{name}.pdf").tables for name in ("2309.06180", "2403.02310")}


def _rows_of(tables: list, caption_start: str) -> list:
    table = next(t for t in tables if t.caption.startswith(caption_start))
    return table_rows(table.cells, table.page, table.caption)


def test_a_table_whose_names_run_down_its_first_column_is_read_column_by_column(tables):
    rows = _rows_of(tables["2309.06180"], "Table 1")
    by_size = {dict(row.pairs)["Model size"]: row for row in rows}
    assert set(by_size) == {"13B", "66B", "175B"}
    assert dict(by_size["66B"].pairs) == {"Model size": "66B", "GPUs": "4×A100", "Total GPU memory": "160 GB",
                                          "Parameter size": "132 GB", "Memory for KV cache": "21 GB",
                                          "Max. # KV cache slots": "9.7K"}
    assert by_size["13B"].sentence.startswith("Table 1 (p. 9), Model size 13B: GPUs A100; Total GPU memory 40 GB;")
    assert all(row.page == 9 for row in rows)


def test_rows_the_detector_merged_are_split_back_and_keep_their_header(tables):
    rows = _rows_of(tables["2403.02310"], "Table 1")
    by_model = {row.pairs[0][1]: dict(row.pairs) for row in rows}
    assert list(by_model) == ["Mistral-7B", "Yi-34B", "LLaMA2-70B", "Falcon-180B"]
    assert by_model["LLaMA2-70B"]["GPU Configuration"] == "8 A40s (TP4-PP2)"
    assert by_model["Mistral-7B"]["Memory Total (per-GPU)"] == "80GB (80GB)"
    assert rows[0].sentence == ("Table 1 (p. 11), Mistral-7B: Attention Mechanism GQA-SW; GPU Configuration 1 A100; "
                                "Memory Total (per-GPU) 80GB (80GB)")


def test_cell_text_keeps_the_spaces_and_decimals_of_the_page(tables):
    rows = _rows_of(tables["2403.02310"], "Table 3")
    assert dict(rows[0].pairs) == {"Model": "Mistral-7B", "relaxed SLO P99 TBT (s)": "0.5",
                                   "strict SLO P99 TBT (s)": "0.1"}


def test_leading_rows_without_values_form_one_header():
    cells = [["Models", "# of", "Hidden"], ["", "Layers", "Size"], ["Llama3-7B", "32", "4096"]]
    (row,) = table_rows(cells, page=10, caption="Table 1: LLM backbone configurations.")
    assert row.pairs == (("Models", "Llama3-7B"), ("# of Layers", "32"), ("Hidden Size", "4096"))
    assert row.sentence == "Table 1 (p. 10), Llama3-7B: # of Layers 32; Hidden Size 4096"

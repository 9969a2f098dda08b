"""The rule path of the parser (no outline) on PDFs built here in the two common heading styles:
numbered bold headings and IEEE roman capitals with an inline "Abstract—"."""
from __future__ import annotations

from pathlib import Path

import pymupdf

from papers.pdf import parse_pdf

BODY = ("Serving large language models needs memory for the KV cache, and batching many requests "
        "raises throughput. ") * 3


def build(path: Path, title: str, abstract_line: str, headings: list[str], bold_headings: bool) -> Path:
    doc = pymupdf.open()
    for n, heading in enumerate(headings):
        page = doc.new_page()
        y = 72
        if n == 0:
            page.insert_text((72, y), title, fontsize=18, fontname="hebo")
            y += 40
            page.insert_textbox(pymupdf.Rect(72, y, 520, y + 80), abstract_line + " " + BODY, fontsize=10)
            y += 100
        page.insert_text((72, y), heading, fontsize=11 if bold_headings else 10,
                         fontname="hebo" if bold_headings else "helv")
        page.insert_textbox(pymupdf.Rect(72, y + 10, 520, y + 300), BODY * 2, fontsize=10)
    doc.save(path)
    return path


def test_numbered_bold_headings_without_an_outline(tmp_path: Path) -> None:
    headings = ["1 Introduction", "2 Background", "2.1 KV Cache", "3 Design", "4 Evaluation", "5 Conclusion"]
    parsed = parse_pdf(build(tmp_path / "a.pdf", "Paged Serving for LLMs", "Abstract", headings, True))
    assert parsed.title == "Paged Serving for LLMs" and not parsed.outline_used
    assert [(s.number, s.title) for s in parsed.sections] == [tuple(h.split(" ", 1)) for h in headings]
    assert parsed.abstract.startswith("Serving large language models") and "Introduction" not in parsed.abstract
    assert [s.page_start for s in parsed.sections] == [1, 2, 3, 4, 5, 6]


def test_ieee_roman_capital_headings_and_an_inline_abstract(tmp_path: Path) -> None:
    headings = ["I. INTRODUCTION", "II. BACKGROUND", "III. DESIGN", "IV. EVALUATION", "V. CONCLUSION"]
    path = build(tmp_path / "b.pdf", "Disaggregated Prefill", "Abstract-We split prefill and decode.", headings, False)
    parsed = parse_pdf(path)
    assert [(s.number, s.title) for s in parsed.sections] == [tuple(h.split(". ", 1)) for h in headings]
    assert parsed.abstract.startswith("We split prefill and decode.")


def test_without_an_abstract_marker_the_first_body_block_is_the_abstract(tmp_path: Path) -> None:
    headings = ["1 Introduction", "2 Design", "3 Evaluation", "4 Related Work", "5 Conclusion"]
    parsed = parse_pdf(build(tmp_path / "c.pdf", "Chunked Prefill", "We chunk long prompts.", headings, True))
    assert parsed.abstract.startswith("We chunk long prompts. Serving large language models")
    assert parsed.warnings == ["no abstract marker found; used the first body paragraph"]


def test_table_detection_can_be_skipped_for_text_only_callers(corpus_pdfs: dict[str, Path]) -> None:
    parsed = parse_pdf(corpus_pdfs["2309.06180"], detect_tables=False)
    assert parsed.tables == [] and parsed.title.startswith("Efficient Memory Management")
    assert any(c.label == "Table 1" for c in parsed.captions) and len(parsed.sections) >= 5

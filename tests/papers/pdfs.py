"""PDFs generated in tests: small, fast to parse, and saying exactly what a test needs."""
from __future__ import annotations

from pathlib import Path

import pymupdf

SERVING_TEXT = (
    "Sys: fast serving. We present Sys, a serving engine for large language models. "
    "All experiments run on 8 NVIDIA A100 GPUs with CUDA 12.1. We set the block size to 16 tokens. "
    "Larger blocks reduce kernel overhead but increase internal fragmentation. " * 3
)


def text_pdf(path: Path, *pages: str, title: str | None = None) -> Path:
    """A PDF with one page per text (a bold title line on page 1 when given)."""
    doc = pymupdf.open()
    for number, text in enumerate(pages):
        page = doc.new_page()
        top = 40
        if title and number == 0:
            page.insert_text((40, 60), title, fontsize=16, fontname="hebo")
            top = 80
        page.insert_textbox(pymupdf.Rect(40, top, 560, 800), text, fontsize=9)
    doc.save(path)
    return path

"""PDFs generated in tests: small, fast to parse, and saying exactly what a test needs."""
from __future__ import annotations

from pathlib import Path

import pymupdf

SERVING_TEXT = (
    "Sys: fast serving. We present Sys, a serving engine for large language models. "
    "All experiments run on 8 NVIDIA A100 GPUs with CUDA 12.1. We set the block size to 16 tokens. "
    "Larger blocks reduce kernel overhead but increase internal fragmentation. " * 3
)


def text_pdf(path: Path, *pages: str, title: str | None = None, stamp: str | None = None) -> Path:
    """A PDF with one page per text (a bold title line on page 1 when given). `stamp` is set on page 1
    the way arXiv stamps its PDFs: rotated to read upwards in the left margin, e.g.
    "arXiv:2401.00001v2  [cs.DC]  1 Jan 2024"."""
    doc = pymupdf.open()
    for number, text in enumerate(pages):
        page = doc.new_page()
        top = 40
        if title and number == 0:
            page.insert_text((40, 60), title, fontsize=16, fontname="hebo")
            top = 80
        if stamp and number == 0:
            page.insert_text((30, 560), stamp, fontsize=20, rotate=90, color=(0.5, 0.5, 0.5))
        page.insert_textbox(pymupdf.Rect(40, top, 560, 800), text, fontsize=9)
    doc.save(path)
    return path

"""Text lines of a PDF with the font facts the structure heuristics need.

PyMuPDF splits a visual line into several "lines" when fonts change or numbers are set apart
("1" and "INTRODUCTION" at the same height), so fragments at the same height are merged here.
Rotated text (the arXiv stamp in the margin, axis labels of figures) is kept apart, with its place
on the page: it is not part of the reading flow, and where it sits tells a stamp from a label.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pymupdf

from papers.cleaning import clean_text

_TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES
_BOLD_FONT = re.compile(r"bold|medi|semibold|heavy|black|-bd|\.b$", re.IGNORECASE)


@dataclass
class Line:
    page: int  # 1-based
    block: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    bold_prefix: str  # leading bold text, for run-in headings ("4.1 Setup. We run ...")


def _is_bold(span: dict) -> bool:
    return bool(span["flags"] & 16) or bool(_BOLD_FONT.search(span["font"]))


def _line_from_spans(page_no: int, block_no: int, bbox: tuple, spans: list[dict]) -> Line | None:
    text = clean_text("".join(s["text"] for s in spans))
    if not text.strip():
        return None
    visible = [s for s in spans if s["text"].strip()]
    size = max(visible, key=lambda s: len(s["text"].strip()))["size"]
    bold_prefix = ""
    for span in spans:
        if span["text"].strip() and not _is_bold(span):
            break
        bold_prefix += clean_text(span["text"])
    bold = all(_is_bold(s) for s in visible)
    return Line(page_no, block_no, bbox[0], bbox[1], bbox[2], bbox[3], " ".join(text.split()), round(size, 1),
                bold, " ".join(bold_prefix.split()))


def page_lines(page: pymupdf.Page) -> tuple[list[Line], list[Line]]:
    """Lines of one page in content order, same-height fragments merged; plus its rotated lines
    (text not written left to right), each with its bounding box."""
    lines: list[Line] = []
    rotated: list[Line] = []
    data = page.get_text("dict", flags=_TEXT_FLAGS)
    for block_no, block in enumerate(data["blocks"]):
        for raw in block.get("lines", []):
            if abs(raw["dir"][0] - 1.0) > 0.01:
                turned = _line_from_spans(page.number + 1, block_no, raw["bbox"], raw["spans"])
                if turned is not None:
                    rotated.append(turned)
                continue
            line = _line_from_spans(page.number + 1, block_no, raw["bbox"], raw["spans"])
            if line is None:
                continue
            prev = lines[-1] if lines else None
            if prev and abs(prev.y1 - line.y1) < 2.0 and -1.0 <= line.x0 - prev.x1 < 40.0:
                if prev.bold_prefix == prev.text:
                    prev.bold_prefix = f"{prev.bold_prefix} {line.bold_prefix}".strip()
                prev.text = f"{prev.text} {line.text}"
                prev.x1 = line.x1
                prev.bold = prev.bold and line.bold
                continue
            lines.append(line)
    return lines, rotated


def body_size(lines: list[Line]) -> float:
    """The font size most characters are set in: the reference for "larger than body"."""
    counts: Counter[float] = Counter()
    for line in lines:
        counts[round(line.size * 2) / 2] += len(line.text)
    return counts.most_common(1)[0][0] if counts else 10.0

"""The identifiers a PDF states about itself: the arXiv stamp in its margin and its DOI.

arXiv prints its stamp ("arXiv:2309.06180v2  [cs.CL]  12 Sep 2023") rotated up the left margin of
page 1 of every PDF it serves. That stamp, and no id in the running text, is the PDF's own arXiv id:
page 1 of a survey or a short paper also cites other papers' ids ("… PagedAttention.
arXiv:2309.06180, 2023."), and taking those for the file's own id stored a citing PDF as the cited
paper. Used by `parse_pdf`; papers.services.identity decides what the ids mean for stored papers.
"""
from __future__ import annotations

import re

from papers.arxiv_ids import NEW_STYLE, OLD_STYLE
from papers.pdf.lines import Line

# The whole stamp from its start: id, optional version, then the primary category in brackets.
_STAMP = re.compile(rf"^arXiv:({NEW_STYLE}|{OLD_STYLE})(?:v(\d{{1,4}}))?\s+\[[A-Za-z-]{{1,20}}(?:\.[A-Za-z-]{{1,20}})?\]")
# arXiv sets the stamp within the outer 7% of the page width (x1 = 38 pt on 595 and 612 pt pages in
# /work/shared/corpus); axis labels of figures, the other rotated text on a first page, sit in the body.
_MARGIN_FRACTION = 0.12
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]{1,150})")
_DOI_CUE = re.compile(r"\bdoi\b|doi\.org/", re.IGNORECASE)
_XMP_DOI = re.compile(r"<prism:doi>\s*(10\.[^<\s]{3,160})\s*</prism:doi>|\bdoi:(10\.[^<\s\"]{3,160})", re.IGNORECASE)
_REFERENCES = re.compile(r"^(?:[\dIVX]{1,4}\.?\s+)?(?:references|bibliography)$", re.IGNORECASE)


def margin_stamp(rotated: list[Line], page_width: float) -> tuple[str, int | None] | None:
    """(arXiv id, version or None) from a vertical stamp in the left margin of page 1, else None."""
    for line in rotated:
        vertical = (line.y1 - line.y0) > 2 * (line.x1 - line.x0)
        if line.page != 1 or not vertical or line.x1 > page_width * _MARGIN_FRACTION:
            continue
        match = _STAMP.match(line.text.strip())
        if match:
            return match.group(1), int(match.group(2)) if match.group(2) else None
    return None


def _clean_doi(raw: str) -> str:
    return raw.rstrip(".,;:)]}").lower()


def own_doi(xmp_metadata: str, first_page: list[Line]) -> str | None:
    """The PDF's DOI: from its XMP metadata, else one page 1 prints as a DOI ("DOI:", "doi.org/")
    before any references list there (a DOI in a reference is another paper's)."""
    tagged = _XMP_DOI.search(xmp_metadata or "")
    if tagged:
        return _clean_doi(tagged.group(1) or tagged.group(2))
    for line in first_page:
        if _REFERENCES.match(line.text.strip(" .:")):
            break
        found = _DOI.search(line.text) if _DOI_CUE.search(line.text) else None
        if found:
            return _clean_doi(found.group(1))
    return None

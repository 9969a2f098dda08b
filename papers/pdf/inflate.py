"""How much a PDF's compressed streams inflate to, counted without keeping the inflated bytes.

A Flate stream can inflate ~1000-fold (more through chained filters): a 1.2 MB "zip bomb" PDF made
MuPDF hold gigabytes and a web worker for a minute. Counting the inflated size in fixed chunks
before MuPDF reads any page refuses such a file in well under a second (`parse_pdf`'s
`max_inflated_bytes`). Images are not counted: text extraction never decodes them (pixel data is
most of what real papers inflate to: up to 200 MB for a 14-page paper in /work/shared/corpus).
"""
from __future__ import annotations

import zlib
from collections.abc import Iterator

import pymupdf

from papers.pdf.model import PdfError

_CHUNK = 1 << 20  # inflated bytes produced per step


def _inflate(source: Iterator[bytes]) -> Iterator[bytes]:
    """One Flate layer over a stream of compressed chunks, yielding at most _CHUNK bytes at a time."""
    decoder = zlib.decompressobj()
    for data in source:
        while data:
            out = decoder.decompress(data, _CHUNK)
            if out:
                yield out
            data = decoder.unconsumed_tail


def _flate_layers(doc: pymupdf.Document, xref: int) -> int:
    """How many Flate filters the stream's filter chain starts with (0 when it starts otherwise)."""
    kind, value = doc.xref_get_key(xref, "Filter")
    if kind not in ("name", "array"):
        return 0
    names = value.strip("[]").replace("/", " ").split()
    layers = 0
    for name in names:
        if name not in ("FlateDecode", "Fl"):
            break
        layers += 1
    return layers


def check_inflated_size(doc: pymupdf.Document, limit: int) -> int:
    """The total inflated size of the document's Flate streams; PdfError as soon as it passes `limit`.
    A stream that is not valid Flate counts as far as it inflates (MuPDF repairs or skips the rest)."""
    total = 0
    for xref in range(1, doc.xref_length()):
        if not doc.xref_is_stream(xref):
            continue
        layers = _flate_layers(doc, xref)
        if not layers or doc.xref_get_key(xref, "Subtype")[1] == "/Image":
            continue
        stream: Iterator[bytes] = iter([doc.xref_stream_raw(xref)])
        for _ in range(layers):
            stream = _inflate(stream)
        try:
            for chunk in stream:
                total += len(chunk)
                if total > limit:
                    raise PdfError(f"the PDF's compressed content inflates to more than {limit:,} bytes "
                                   "(PDF_MAX_INFLATED_BYTES); it may be a decompression bomb")
        except zlib.error:
            continue
    return total

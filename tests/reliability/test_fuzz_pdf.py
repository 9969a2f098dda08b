"""Hostile PDFs: truncated, bit-flipped, spliced and random files give only clean `PdfError`s.

Hypothesis drives the mutations from a real corpus paper; any other exception (or a hang) is a bug
in the parser's error handling. The iteration counts are reported in the closing note of issue 8.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papers.pdf import PdfError, parse_pdf

pytestmark = pytest.mark.slow
SEED_PDF = "2401.09670.pdf"  # the smallest corpus paper keeps each example fast


def fuzz(examples: int) -> settings:
    """Bounded, repeatable runs: whole-PDF parses cost up to a second each on this machine."""
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def pdf_bytes(corpus_dir: Path) -> bytes:
    return (corpus_dir / "pdfs" / SEED_PDF).read_bytes()


def parse_or_clean_error(tmp_path: Path, data: bytes, name: str = "fuzz.pdf") -> None:
    path = tmp_path / name
    path.write_bytes(data)
    try:
        parsed = parse_pdf(path)
    except PdfError as exc:
        assert str(exc), "a PdfError must say what is wrong"
        return
    assert parsed.page_count >= 1


@fuzz(25)
@given(cut=st.floats(min_value=0.0, max_value=0.999))
def test_a_truncated_pdf_parses_or_fails_cleanly(tmp_path: Path, pdf_bytes: bytes, cut: float) -> None:
    parse_or_clean_error(tmp_path, pdf_bytes[: int(len(pdf_bytes) * cut)])


@fuzz(25)
@given(flips=st.lists(st.tuples(st.floats(0.0, 0.999), st.integers(0, 255)), min_size=1, max_size=64))
def test_a_pdf_with_corrupted_bytes_parses_or_fails_cleanly(tmp_path: Path, pdf_bytes: bytes, flips) -> None:
    data = bytearray(pdf_bytes)
    for where, value in flips:
        data[int(where * len(data))] = value
    parse_or_clean_error(tmp_path, bytes(data))


@fuzz(60)
@given(junk=st.binary(min_size=0, max_size=4096), keep_header=st.booleans())
def test_random_bytes_fail_cleanly(tmp_path: Path, junk: bytes, keep_header: bool) -> None:
    parse_or_clean_error(tmp_path, (b"%PDF-1.7\n" if keep_header else b"") + junk)


def test_an_encrypted_pdf_is_refused_with_a_reason(tmp_path: Path, corpus_dir: Path) -> None:
    import pymupdf

    doc = pymupdf.open(corpus_dir / "pdfs" / SEED_PDF)
    target = tmp_path / "locked.pdf"
    doc.save(target, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="secret")
    with pytest.raises(PdfError, match="password"):
        parse_pdf(target)

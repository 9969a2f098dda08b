"""PDF parsing with PyMuPDF, Django-free: `parse_pdf(path) -> ParsedPdf` (the cross-app contract).

Modules: lines (text lines with fonts), structure (title, abstract, headings), tables (captions and
ruled tables), environment (GPUs and software versions a paper reports), parser (the entry point).
"""
from papers.pdf.model import Caption, ParsedPdf, ParsedSection, ParsedTable, PdfError
from papers.pdf.parser import page_quote_texts, parse_pdf

__all__ = ["Caption", "ParsedPdf", "ParsedSection", "ParsedTable", "PdfError", "page_quote_texts", "parse_pdf"]

"""Writes of the papers app (services write, selectors read). Tasks, commands and other apps call these.

Contract: `ingest_pdf(path, arxiv_id=None) -> Paper`. Modules: lifecycle (the paper's life: the
create-or-fill upsert and every status change), identity (which paper a PDF is), arxiv (metadata
crawl), github (repository health), pdfs (download, store, parse), extraction (a stored paper through
the ontology's `ingest_document`), imports (a person's PDFs), seed (bundled list); outcomes are
recorded as events (papers.events). Names other apps use are listed in `__all__`.
"""
from papers.events import record_event
from papers.pdf import ParsedPdf, PdfError, parse_pdf
from papers.scoring.services import store_imported_score
from papers.services.arxiv import (
    CrawlReport,
    crawl_arxiv,
    import_atom_files,
    link_code,
    link_code_urls,
    upsert_result,
)
from papers.services.identity import AcceptRefused, accept_held_pdf
from papers.services.imports import import_pdf, queue_extraction
from papers.services.lifecycle import advance_paper, fail_paper, fill_paper, mark_paper, store_outline
from papers.services.pdfs import download_paper_pdf, ingest_pdf, parse_paper_pdf, store_pdf
from papers.services.seed import load_seed

__all__ = [
    "AcceptRefused", "CrawlReport", "ParsedPdf", "PdfError", "advance_paper", "crawl_arxiv", "download_paper_pdf", "fail_paper",
    "fill_paper", "import_atom_files", "accept_held_pdf", "import_pdf", "ingest_pdf", "link_code", "link_code_urls", "load_seed", "mark_paper",
    "parse_paper_pdf", "queue_extraction", "parse_pdf", "record_event", "store_imported_score", "store_outline", "store_pdf",
    "upsert_result",
]

"""Writes of the papers app (services write, selectors read). Tasks and commands call these.

Contract: `ingest_pdf(path, arxiv_id=None) -> Paper`. Modules: arxiv (metadata crawl), github
(repository health), pdfs (download, store, parse), seed (bundled list), events (outcomes).
"""
from papers.services.arxiv import CrawlReport, crawl_arxiv, import_atom_files, link_code, upsert_result
from papers.services.events import advance_paper, fail_paper, record_event
from papers.services.pdfs import download_paper_pdf, ingest_pdf, parse_paper_pdf, store_pdf
from papers.services.seed import load_seed

__all__ = [
    "CrawlReport", "advance_paper", "crawl_arxiv", "download_paper_pdf", "fail_paper", "import_atom_files",
    "ingest_pdf", "link_code", "load_seed", "parse_paper_pdf", "record_event", "store_pdf", "upsert_result",
]

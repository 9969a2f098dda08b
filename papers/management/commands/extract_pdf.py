"""`python manage.py extract_pdf PATH --json`: extract facts from one PDF without storing anything.

Used by the fact-extraction eval and by people trying the extractor on a paper. Prints
{"paper": {...}, "facts": [...]} (../shared/eval/FACTS_FORMAT.md); a PDF without a text layer or an
unreadable, encrypted or corrupt one exits 2 with an error a person can act on. The PDF is read
once (papers.pdf.parse_pdf); its pages, outline, tables and captions go to the ontology's extraction.
The LLM extractor runs when the server at `--llm-url` (else settings.LLM_URL, INFRAWIKI_LLM_URL)
answers; otherwise the rule extractors run alone and stderr says so. `--no-llm` runs the rules only.
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ontology.services import LlmUnavailable, default_llm_extractor, export_facts, extract_document
from papers.pdf import PdfError, parse_pdf
from papers.services.identity import id_in_file_name


class Command(BaseCommand):
    help = "Extract typed facts (constraints, parameters, trade-offs) from a PDF and print them."

    def add_arguments(self, parser) -> None:
        parser.add_argument("path")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the FACTS_FORMAT JSON")
        parser.add_argument("--no-llm", action="store_true", help="rule extractors only")
        parser.add_argument("--llm-url", default=None,
                            help="OpenAI-compatible server to extract with, e.g. http://127.0.0.1:8001/v1 "
                                 "(default: settings.LLM_URL)")

    def handle(self, *args, path: str, as_json: bool = False, no_llm: bool = False, llm_url: str | None = None,
               **options) -> None:
        pdf = Path(path)
        if not pdf.is_file():
            raise CommandError(f"{pdf}: no such file", returncode=2)
        try:
            document = parse_pdf(pdf)
        except PdfError as exc:
            raise CommandError(exc.reason, returncode=2) from exc
        llm = None
        if not no_llm:
            try:
                llm = default_llm_extractor(url=llm_url)
            except LlmUnavailable as exc:
                self.stderr.write(f"LLM extractor skipped: {exc}")
        try:
            result = extract_document(document, llm=llm)
        except LlmUnavailable as exc:  # the server went away mid-paper: report rule facts rather than nothing
            self.stderr.write(f"LLM extractor failed, rule extractors only: {exc}")
            result = extract_document(document, llm=None)
        arxiv_id = document.arxiv_id or id_in_file_name(pdf.name)
        payload = {
            "paper": {"title": document.title, "arxiv_id": arxiv_id, "subject": result.subject,
                      "pages": len(document.page_texts), "stats": result.stats,
                      "rejected_outputs": len(result.rejected)},
            "facts": export_facts(result.facts),
        }
        if as_json:
            self.stdout.write(_json_dumps(payload))
            return
        self.stdout.write(f"{document.title or pdf.name} — subject {result.subject}, {len(result.facts)} facts")
        for fact in payload["facts"]:
            value = f" = {fact['value']} {fact['unit'] or ''}" if fact["value"] is not None else ""
            self.stdout.write(f"  p.{fact['page']} {fact['kind']:<10} {fact['parameter']}{value}  [{fact['extractor']}]")


def _json_dumps(payload: dict) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=1)

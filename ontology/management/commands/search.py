"""`python manage.py search "QUERY" [--json] [--limit N] [--type fact|section|paper ...]`.

The hybrid search the UI and API use (ontology.selectors.hybrid_search), from the shell.
--json prints {"results": [{"type", "paper", "page", "text", "score"}]} best first. A query the API
would refuse (empty, over its length limit, not valid UTF-8) is an error with exit status 2.
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from rest_framework.exceptions import ValidationError

from ontology.selectors import DOC_TYPES, hybrid_search
from ontology.serializers import SearchQuerySerializer


class Command(BaseCommand):
    help = "Search facts, sections and papers (vector similarity fused with full-text rank)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("query")
        parser.add_argument("--json", dest="as_json", action="store_true")
        parser.add_argument("--limit", type=int, default=10)
        parser.add_argument("--type", dest="types", action="append", choices=DOC_TYPES)

    def handle(self, *args, query: str, as_json: bool, limit: int, types: list[str] | None, **options) -> None:
        if not query.strip():
            raise CommandError("give a query, e.g. search \"how large should KV cache blocks be\"", returncode=2)
        if any("\ud800" <= ch <= "\udfff" for ch in query):  # bytes the shell's encoding could not decode
            raise CommandError("the query is not valid UTF-8; type it again or fix the terminal's encoding",
                               returncode=2)
        try:
            query = SearchQuerySerializer().fields["q"].run_validation(query)  # the API's limits, too
        except ValidationError as exc:
            raise CommandError(f"query: {' '.join(map(str, exc.detail))}; shorten it to the words that matter",
                               returncode=2) from None
        if not 1 <= limit <= 100:
            raise CommandError("--limit must be between 1 and 100", returncode=2)
        results = hybrid_search(query, limit=limit, types=tuple(types or DOC_TYPES))
        if as_json:
            self.stdout.write(json.dumps({"results": results}, ensure_ascii=False, indent=1))
            return
        if not results:
            self.stdout.write("no results (has anything been extracted? see `extract_papers`)")
        for rank, hit in enumerate(results, start=1):
            self.stdout.write(f"{rank:>2}. [{hit['type']}] arXiv:{hit['paper']} p.{hit['page']} "
                              f"({hit['score']:.4f}) {hit['text'][:160]}")

"""The API's JSON body parser: DRF's, plus a clear 400 for bodies nested too deeply to decode
(Python's decoder raises RecursionError there, which DRF would answer with a 500)."""
from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply; flatten it") from None

"""The API's body parsers and parser choice: DRF's, plus a clear 400 (the API's error shape) for
bodies DRF would pass on to a view that then fails as a server error.

- a body nested too deeply to decode (Python's decoder raises RecursionError);
- text no database or tokenizer can hold: a NUL character or a lone UTF-16 surrogate ("\\ud800" in
  JSON) in any key or value, whatever the content type (the NUL middleware only reads form and JSON
  bodies, and multipart forms are left to their views);
- a form body that is not valid in its declared charset (Django refuses non-UTF-8 forms; DRF's form
  parser would decode bytes it cannot read as Latin-1 mojibake);
- a Content-Type that names no media type (`*/*`), which DRF would match to the first parser.

settings.REST_FRAMEWORK names these classes; the token view (infrawiki.api_token) names them too.
"""
from __future__ import annotations

import re
from typing import Any

from django.http import QueryDict
from rest_framework import negotiation, parsers
from rest_framework.exceptions import ParseError

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _check_text(value: Any) -> None:
    """ParseError when any string in a parsed body (keys too, at any depth) cannot be stored."""
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found:
            what = "a NUL character" if found.group() == "\x00" else "a lone UTF-16 surrogate (e.g. \\ud800)"
            raise ParseError(f"The body contains {what}, which no text field can hold; remove it and send it again.")
    elif isinstance(value, QueryDict):
        for key, values in value.lists():
            _check_text(key)
            _check_text(values)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_text(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_text(item)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply; flatten it") from None
        _check_text(data)
        return data


class FormParser(parsers.FormParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})
        body = stream.read() if stream is not None else b""
        try:
            body.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            raise ParseError(f"Form parse error - the body is not valid {encoding}; send it as UTF-8.") from None
        data = QueryDict(body, encoding=encoding)
        _check_text(data)
        return data


class MultiPartParser(parsers.MultiPartParser):
    def parse(self, stream, media_type=None, parser_context=None):
        result = super().parse(stream, media_type, parser_context)
        _check_text(result.data)
        return result


class ContentNegotiation(negotiation.DefaultContentNegotiation):
    """DRF's choice, except that a wildcard Content-Type (`*/*`, `application/*`) is a 400: it says
    nothing about how the body is written, and DRF would otherwise read it as the first parser's."""

    def select_parser(self, request, parsers):
        if "*" in (request.content_type or ""):
            raise ParseError(f"Content-Type {request.content_type!r} names no media type; "
                             "send Content-Type: application/json.")
        return super().select_parser(request, parsers)

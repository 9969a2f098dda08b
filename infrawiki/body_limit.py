"""Answers 413 to a request whose declared body is over the limit, before anything reads the body.

Django refuses a form or JSON body over DATA_UPLOAD_MAX_MEMORY_SIZE only when something reads it,
and then as a bare HTML 400, also under /api/ where clients expect the API's error shape. This
middleware (first in settings.MIDDLEWARE after SecurityMiddleware) looks at Content-Length and
answers 413 in the API's shape under /api/, a plain page elsewhere. A multipart upload (a PDF) may
be as large as PDF_MAX_BYTES on top. A body sent without a length is still capped by Django itself.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from infrawiki.api_errors import refusal


def body_limit(request: HttpRequest) -> int:
    """The most bytes this request's body may have."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if (request.content_type or "").startswith("multipart/form-data"):
        limit += settings.PDF_MAX_BYTES
    return limit


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = body_limit(request)
        if length <= limit:
            return self.get_response(request)
        return refusal(request, 413, "request body too large", heading="Request too large",
                       hint=f"The request body is {length:,} bytes; at most {limit:,} are accepted here.")

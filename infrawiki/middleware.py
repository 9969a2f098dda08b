"""Refuses requests that carry NUL characters, before any view sees them.

PostgreSQL cannot store or compare a NUL inside text, so a NUL in a path (`/api/papers/%00/`), a
query parameter (`?q=%00`), a form field or a JSON string reached the database and failed there
as a server error. This middleware answers 400 instead, in the API's error shape under /api/ and
as a plain page elsewhere; it is the one place that check lives (settings.MIDDLEWARE).
"""
from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from infrawiki.api_errors import refusal


def _has_nul(request: HttpRequest) -> bool:
    if "\x00" in request.path_info:
        return True
    if any("\x00" in key or any("\x00" in v for v in values) for key, values in request.GET.lists()):
        return True
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return False
    content_type = request.content_type or ""
    if content_type == "application/x-www-form-urlencoded":
        return any("\x00" in key or any("\x00" in v for v in values) for key, values in request.POST.lists())
    if content_type == "application/json" or content_type.endswith("+json"):
        body = request.body  # Django caps it at DATA_UPLOAD_MAX_MEMORY_SIZE (400 beyond)
        # A JSON string spells NUL "\u0000" (rarely, an escaped backslash before "u0000" is refused too).
        return b"\x00" in body or b"\\u0000" in body.lower()
    return False


class RejectNulMiddleware:
    """400 for a NUL in the path, the query string, a form body or a JSON body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _has_nul(request):
            return refusal(request, 400, "malformed request", heading="Bad request",
                           hint="The request contains a NUL character (%00 or \\u0000); remove it and send it again.")
        return self.get_response(request)

"""One error shape for every API failure: `{"error": "<what went wrong>", "detail": ..., "hint": ...}`.

DRF calls `exception_handler` for any exception an API view raises (settings.REST_FRAMEWORK);
`api_not_found` / `api_server_error` answer the same shape for /api/ URLs that match no view or
crash outside DRF. `error` is a short stable phrase a tool can switch on; `detail` is the specifics
(field errors for invalid input); `hint` says what to do next when there is something to do.
"""
from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)

_PHRASES: dict[type[exceptions.APIException], tuple[str, str | None]] = {
    exceptions.ValidationError: ("invalid input", "Fix the fields listed in detail and send the request again."),
    exceptions.ParseError: ("malformed request", "Send a valid JSON body with Content-Type: application/json."),
    exceptions.NotAuthenticated: ("authentication required", "Log in, or send 'Authorization: Token <key>'."),
    exceptions.AuthenticationFailed: ("authentication failed", "Check the token or the session, then retry."),
    exceptions.PermissionDenied: ("permission denied", None),
    exceptions.NotFound: ("not found", None),
    exceptions.MethodNotAllowed: ("method not allowed", None),
    exceptions.NotAcceptable: ("not acceptable", "Ask for application/json."),
    exceptions.UnsupportedMediaType: ("unsupported media type", "Send application/json."),
    exceptions.Throttled: ("too many requests", None),
}


def error_body(error: str, detail: Any = None, hint: str | None = None) -> dict[str, Any]:
    """The API's error document; omits empty parts."""
    body: dict[str, Any] = {"error": error}
    if detail not in (None, "", [], {}):
        body["detail"] = detail
    if hint:
        body["hint"] = hint
    return body


def refusal(request: HttpRequest, status: int, error: str, hint: str, heading: str) -> HttpResponse:
    """A request refused before any view runs (by middleware): the API's error document under
    /api/, a plain page with `heading` and `hint` elsewhere."""
    if request.path_info.startswith("/api/"):
        return JsonResponse(error_body(error, hint=hint), status=status)
    return HttpResponse(f"<!doctype html><title>{heading}</title><h1>{heading}</h1><p>{escape(hint)}</p>",
                        status=status)


def _advisor_input_error(exc: Exception) -> Response | None:
    """The advisor's own input errors (advisor.validation.AdvisorInputError) carry error + hint."""
    try:
        from advisor.validation import AdvisorInputError
    except ImportError:
        return None
    if isinstance(exc, AdvisorInputError):
        return Response(error_body(str(exc.error), hint=getattr(exc, "hint", None)), status=400)
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF hook: every API exception becomes {"error", "detail", "hint"} with the right status."""
    advisor = _advisor_input_error(exc)
    if advisor is not None:
        return advisor
    if isinstance(exc, ValidationError):
        exc = exceptions.ValidationError(detail=exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        view = context.get("view")
        logger.exception("API view %s failed", type(view).__name__ if view else "?", exc_info=exc)
        return Response(
            error_body("server error", hint="This is a bug on our side; it has been logged. Retry later."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    error, hint = "request failed", None
    for cls in type(exc).__mro__:
        if cls in _PHRASES:
            error, hint = _PHRASES[cls]
            break
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        detail = detail["detail"]
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        hint = f"Retry in {int(exc.wait) + 1} s."
    response.data = error_body(error, detail, hint)
    return response


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """404 for /api/ paths that match no endpoint (Django's handler404 delegates here)."""
    return JsonResponse(
        error_body("not found", f"No API endpoint at {request.path}.", "See /api/docs/ for the endpoints."),
        status=404,
    )


def api_server_error(request: HttpRequest) -> JsonResponse:
    """500 for /api/ paths that crashed outside DRF's handling."""
    return JsonResponse(error_body("server error", hint="This is a bug on our side; it has been logged."), status=500)

"""Error pages: JSON in the API's error shape under /api/, the site layout elsewhere (root urls'
handler403 / handler404 / handler500 point here)."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from infrawiki.api_errors import api_not_found, api_server_error, error_body


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return api_not_found(request, exception)
    return render(request, "frontend/error.html", {"title": "Not found", "status": 404,
                  "message": "Nothing here. Try the search or the paper list."}, status=404)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = str(exception) if exception and str(exception) else "You may not do that."
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("permission denied", message), status=403)
    return render(request, "frontend/error.html", {"title": "Not allowed", "status": 403, "message": message},
                  status=403)


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/api/"):
        return api_server_error(request)
    # No template context processors here: the request that failed may be the reason.
    return HttpResponse("<!doctype html><title>Server error</title><h1>Something went wrong</h1>"
                        "<p>It has been logged. Try again in a moment.</p>", status=500)

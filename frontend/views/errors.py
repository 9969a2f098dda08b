"""Error pages: JSON in the API's error shape under /api/, the site layout elsewhere (root urls'
handler400 / handler403 / handler404 / handler500 point here)."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from infrawiki.api_errors import api_not_found, api_server_error, error_body


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Django's refusals of a request it cannot read (a form body not in UTF-8, too many fields)."""
    message = str(exception) if exception and str(exception) else "The request could not be read."
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("malformed request", message, "Send a valid JSON body with "
                                       "Content-Type: application/json."), status=400)
    return render(request, "frontend/error.html", {"title": "Bad request", "status": 400, "message": message},
                  status=400)


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

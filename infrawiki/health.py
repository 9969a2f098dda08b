"""`/health`: whether this web process can reach its database, for load balancers and fault tests.

Answers 200 with {"status": "ok"} when a trivial query succeeds, 503 with the reason otherwise —
never a stack trace, so a restarting PostgreSQL shows up as a clean, retryable state.
"""
from __future__ import annotations

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse


def health(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        connection.close()  # the next request opens a fresh connection once the server is back
        return JsonResponse({"status": "unavailable", "database": str(exc).strip()[:200]}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})

"""`/health`: whether this web process can reach its database, for load balancers and fault tests.

Answers 200 with {"status": "ok"} when a trivial query succeeds, 503 with the reason otherwise —
never a stack trace, so a restarting PostgreSQL shows up as a clean, retryable state. The page is
public, so the reason keeps the driver's words (connection refused, no such file, starting up) but
not the socket path, data directory or host it names: those are for the server's log.
"""
from __future__ import annotations

import logging
import re

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse

log = logging.getLogger(__name__)

# A quoted name ("/run/pg/.s.PGSQL.5432", "db.internal") or a bare absolute path in a driver message.
_NAMES = re.compile(r'"[^"]*"|(?<![\w.])/[^\s,:;"]+')


def public_reason(exc: Exception) -> str:
    """The driver's message without the names of sockets, directories or hosts, on one line."""
    text = " ".join(str(exc).split())
    return _NAMES.sub("(hidden)", text)[:200] or type(exc).__name__


def health(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        log.warning("health check: database unavailable: %s", exc)
        connection.close()  # the next request opens a fresh connection once the server is back
        return JsonResponse({"status": "unavailable", "database": public_reason(exc)}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})

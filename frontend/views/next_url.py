"""Where a form sends the browser back to: its posted `next` when that is a URL on this site."""
from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def next_url(request: HttpRequest, fallback: str) -> str:
    """The posted `next` if it is a URL of this site, else `fallback` (a URL).

    Always a URL, never passed to `redirect()`: that would read a bare word such as "0" as a view
    name to reverse and fail with a server error.
    """
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return fallback

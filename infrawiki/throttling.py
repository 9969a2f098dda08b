"""Request-rate limits: the API's per-client and per-user rates, and the counters that guard the
login form, the token endpoint and the digest subscribe form.

Every limit names its client by `client_ip`, which believes X-Forwarded-For only as far as the
NUM_PROXIES trusted proxies in front of the site (0 by default: the header is ignored, since any
client can send it). DRF binds throttle rates when its classes are imported; the classes here read
them on every request instead, so a deployment (or a test) can change
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] at run time. Counts are fixed windows in a store every web
worker shares (infrawiki.rate_counter: the CACHE_URL cache when set, else PostgreSQL), so a limit
holds however many gunicorn workers or hosts serve the site.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from infrawiki import rate_counter


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, or with NUM_PROXIES=n proxies in front, the address the
    outermost trusted proxy saw (n-th from the right in X-Forwarded-For)."""
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = settings.NUM_PROXIES
    if proxies <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    return hops[-min(proxies, len(hops))] if hops else remote


class _SharedRate:
    """DRF's throttle, counted in the shared store (DRF keeps its history in the default cache,
    which is per process) with the rate read on every request."""

    scope: str
    _wait: int = 0

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_ident(self, request) -> str:
        return client_ip(request)

    def allow_request(self, request, view) -> bool:
        text = self.get_rate()
        ident = self.get_cache_key(request, view) if text else None  # type: ignore[attr-defined]
        if ident is None:
            return True
        rate = Rate.parse(text)
        events, self._wait = rate_counter.hit(_key(self.scope, ident), rate.seconds)
        return events <= rate.count

    def wait(self) -> int:
        return self._wait


class AnonThrottle(_SharedRate, AnonRateThrottle):
    """Anonymous readers, counted per client address."""


class UserThrottle(_SharedRate, UserRateThrottle):
    """Signed-in users and tools with a token, counted per user. Anonymous clients are AnonThrottle's
    alone (DRF would count them here too, by address: a second write for the same client)."""

    def get_cache_key(self, request, view) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        return super().get_cache_key(request, view)


_RATE = re.compile(r"(\d+)/(\d*)(s|m|h|d)[a-z]*")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    """At most `count` events per `seconds`; written "N/unit" or "N/<k><unit>" ("5/15m", "10/hour")."""

    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        match = _RATE.fullmatch(text.strip().lower())
        if match is None:
            raise ImproperlyConfigured(f"rate {text!r} is not N/unit (e.g. 5/minute, 10/15m)")
        return cls(int(match.group(1)), int(match.group(2) or 1) * _UNIT_SECONDS[match.group(3)])


def _key(scope: str, ident: str) -> str:
    return f"limit:{scope}:" + hashlib.sha256(ident.encode("utf-8", "replace")).hexdigest()


def blocked_for(scope: str, ident: str, rate: Rate) -> int | None:
    """Seconds until `scope`'s current window closes if `ident` has used up `rate` in it, else None
    (nothing is counted)."""
    events, left = rate_counter.seen(_key(scope, ident))
    return left if events >= rate.count else None


def limited(scope: str, ident: str, rate: Rate) -> bool:
    """Whether `ident` has used up `rate` in `scope`'s current window (nothing is counted)."""
    return blocked_for(scope, ident, rate) is not None


def count(scope: str, ident: str, rate: Rate) -> None:
    """Count one event for `ident`; the window starts with its first event."""
    rate_counter.hit(_key(scope, ident), rate.seconds)


def login_blocked(request, username: str) -> int | None:
    """Seconds to wait before another login attempt for `username` from this client, or None.

    Failed attempts are counted per account (however many clients try it) and per client (however
    many accounts it tries); past either limit every attempt is refused, the right password too.
    """
    account, client = Rate.parse(settings.LOGIN_THROTTLE_ACCOUNT), Rate.parse(settings.LOGIN_THROTTLE_CLIENT)
    wait = blocked_for("login-account", username.strip().lower(), account)
    return wait if wait is not None else blocked_for("login-client", client_ip(request), client)


def count_login_failure(request, username: str) -> None:
    count("login-account", username.strip().lower(), Rate.parse(settings.LOGIN_THROTTLE_ACCOUNT))
    count("login-client", client_ip(request), Rate.parse(settings.LOGIN_THROTTLE_CLIENT))

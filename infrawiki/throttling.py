"""Request-rate limits for the API: one for anonymous clients (by IP), one for signed-in users.

DRF binds throttle rates when its classes are imported; these read them on every request instead,
so a deployment (or a test) can change REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] at run time.
"""
from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _LiveRate:
    scope: str

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class AnonThrottle(_LiveRate, AnonRateThrottle):
    """Anonymous readers, counted per client IP."""


class UserThrottle(_LiveRate, UserRateThrottle):
    """Signed-in users and tools with a token, counted per user."""

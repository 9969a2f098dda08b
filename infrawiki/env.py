"""Strict readers for environment variables, used by settings at import time.

A bad value stops the process at start with a message that names the variable, instead of
surfacing later as a confusing runtime error (the healthchecks `hc/settings.py` habit).
"""
from __future__ import annotations

import json
import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, default: str = "", *, schemes: tuple[str, ...]) -> str:
    """A URL whose scheme must be one of `schemes`; empty means "use the embedded default"."""
    raw = os.environ.get(name, default).strip()
    if not raw:
        return ""
    scheme = urlparse(raw).scheme
    if scheme not in schemes:
        raise ImproperlyConfigured(f"{name} has scheme {scheme!r}; expected one of {', '.join(schemes)}")
    return raw


def env_json_object(name: str, default: dict) -> dict:
    """A JSON object, merged over `default` (e.g. broker transport options)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return dict(default)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object like {{\"visibility_timeout\": 3600}}")
    return {**default, **value}

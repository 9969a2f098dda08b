"""Strict readers for environment variables, used by settings at import time.

A bad value stops the process at start with a message that names the variable, instead of
surfacing later as a confusing runtime error (the healthchecks `hc/settings.py` habit).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import urlparse

from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

_CHECKOUT = Path(__file__).resolve().parent.parent
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


# The five fields of a cron line in cron's own order, with the range each allows.
_CRON_FIELDS = (("minute", "0-59"), ("hour", "0-23"), ("day_of_month", "1-31"), ("month_of_year", "1-12"),
                ("day_of_week", "0-6, 0 = Sunday, or mon..sun"))
_CRON_NUMERIC = re.compile(r"[0-9*/,-]+")
_CRON_WEEKDAY = re.compile(r"[0-9a-zA-Z*/,-]+")


def env_cron(name: str, default: str) -> crontab:
    """A Celery schedule from a five-field cron line: minute hour day-of-month month day-of-week.

    The fields are passed to Celery by name, because `crontab`'s positional order (minute, hour,
    day_of_week, day_of_month, month_of_year) is not cron's. Anything but five valid fields stops
    the start, naming the variable and the field. A line that restricts both the day of the month
    and the day of the week is refused too: cron runs on either day, Celery only on days that are both.
    """
    raw = os.environ.get(name, default)
    fields = raw.split()
    if len(fields) != 5:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a cron line: expected 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(fields)}; e.g. '0 8 * * 1' is Mondays at 08:00")
    spec = dict(zip((field for field, _ in _CRON_FIELDS), fields, strict=True))
    for (field, allowed), value in zip(_CRON_FIELDS, fields, strict=True):
        syntax = _CRON_WEEKDAY if field == "day_of_week" else _CRON_NUMERIC
        try:
            if not syntax.fullmatch(value):
                raise ValueError("unexpected characters")
            crontab(**{field: value})
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}={raw!r}: {field} {value!r} is invalid ({exc}); allowed: {allowed}") from None
    if spec["day_of_month"] != "*" and spec["day_of_week"] != "*":
        raise ImproperlyConfigured(
            f"{name}={raw!r} restricts both day_of_month and day_of_week; set one of them to '*'")
    return crontab(**spec)


def shared_dir() -> Path:
    """The data that stays outside this repository (corpus PDFs and their SOURCES, eval sets, recorded
    traffic): INFRAWIKI_SHARED_DIR, else `../shared` beside the checkout. The knowledge pack, the
    benchmarks and the tests all read it through here."""
    return Path(env_str("INFRAWIKI_SHARED_DIR") or _CHECKOUT.parent / "shared")

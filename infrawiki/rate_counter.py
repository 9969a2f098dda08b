"""Fixed-window event counters that every web worker and host shares: the store behind the rate
limits of infrawiki.throttling.

A window opens with a key's first event and lasts the rate's seconds; `hit` counts one event and
says how many the window holds and how long it has left, `seen` reads the same without counting.

Where the counts live:
- with CACHE_URL (Redis), in that cache: `add` + `incr` are atomic there;
- otherwise in PostgreSQL (the RateCounter table), one atomic `INSERT … ON CONFLICT DO UPDATE …
  RETURNING` per event. The per-process memory cache is never used for counting: gunicorn runs
  several worker processes, and each would count on its own (two workers doubled every limit).
"""
from __future__ import annotations

import math
import time

from django.conf import settings
from django.core.cache import cache
from django.db import connection

from infrawiki.models import RateCounter

_TABLE = RateCounter._meta.db_table
_PURGE_BATCH = 100


def _db_hit(key: str, seconds: int) -> tuple[int, int]:
    # One statement, so counting costs one round trip: the upsert locks the key's row, so concurrent
    # events on one key are counted one by one, and restarts a closed window in place. The WITH
    # clause first drops a batch of other keys' closed windows, so the table holds about as many
    # rows as clients active within the longest window; SKIP LOCKED: purges never wait for (or
    # deadlock on) each other or on a row being counted.
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH purged AS (
                DELETE FROM {_TABLE} WHERE key IN (
                    SELECT key FROM {_TABLE} WHERE expires_at < clock_timestamp() AND key <> %(key)s
                    LIMIT {_PURGE_BATCH} FOR UPDATE SKIP LOCKED))
            INSERT INTO {_TABLE} AS c (key, count, expires_at)
            VALUES (%(key)s, 1, clock_timestamp() + make_interval(secs => %(seconds)s))
            ON CONFLICT (key) DO UPDATE SET
                count = CASE WHEN c.expires_at <= clock_timestamp() THEN 1 ELSE c.count + 1 END,
                expires_at = CASE WHEN c.expires_at <= clock_timestamp() THEN EXCLUDED.expires_at
                                  ELSE c.expires_at END
            RETURNING c.count, EXTRACT(EPOCH FROM c.expires_at - clock_timestamp())
            """,
            {"key": key, "seconds": seconds},
        )
        count, left = cursor.fetchone()
    return count, max(1, math.ceil(left))


def _db_seen(key: str) -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count, EXTRACT(EPOCH FROM expires_at - clock_timestamp()) FROM {_TABLE} "
            "WHERE key = %s AND expires_at > clock_timestamp()",
            [key],
        )
        row = cursor.fetchone()
    return (row[0], max(1, math.ceil(row[1]))) if row else (0, 0)


def _cache_hit(key: str, seconds: int) -> tuple[int, int]:
    ends = f"{key}:ends"
    cache.add(ends, time.time() + seconds, seconds)
    cache.add(key, 0, seconds)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr: this event opens a new window
        cache.set(ends, time.time() + seconds, seconds)
        cache.set(key, 1, seconds)
        count = 1
    return count, max(1, math.ceil((cache.get(ends) or time.time() + seconds) - time.time()))


def _cache_seen(key: str) -> tuple[int, int]:
    count, ends = cache.get(key) or 0, cache.get(f"{key}:ends")
    return (count, max(1, math.ceil(ends - time.time()))) if count and ends else (0, 0)


def hit(key: str, seconds: int) -> tuple[int, int]:
    """Count one event: (events in the window including this one, seconds until it closes)."""
    return _cache_hit(key, seconds) if settings.CACHE_URL else _db_hit(key, seconds)


def seen(key: str) -> tuple[int, int]:
    """(events in the open window, seconds until it closes); (0, 0) when none is open."""
    return _cache_seen(key) if settings.CACHE_URL else _db_seen(key)

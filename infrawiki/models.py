"""The project's own table: the rate-limit counters (infrawiki.rate_counter writes and reads it)."""
from __future__ import annotations

from django.db import models


class RateCounter(models.Model):
    """Events counted for one limit and one client in the current fixed window; shared by every
    web worker because it is in the database. Rows whose window has closed are purged as new ones open.
    The table is UNLOGGED (migration 0001): no WAL, so no fsync per counted request."""

    key = models.CharField(primary_key=True, max_length=120, help_text="limit:<scope>:<sha256 of the client>")
    count = models.PositiveIntegerField()
    expires_at = models.DateTimeField(db_index=True, help_text="the window closes at this time")

    def __str__(self) -> str:
        return f"{self.key}: {self.count} until {self.expires_at:%H:%M:%S}"

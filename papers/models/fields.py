"""Model fields of the papers app that clean what they save (papers.cleaning), so text from PDFs,
feeds and files can never make PostgreSQL refuse a row. Used for every free-text column."""
from __future__ import annotations

from typing import Any

from django.db import models

from papers.cleaning import clean_value


class _CleansWhatItSaves:
    """Cleans the value on its way to the database, and on a save also puts the cleaned value back on
    the instance, so what the caller holds after `save()` / `bulk_create()` is what was stored (the
    search index embeds `paper.title` right after it is saved)."""

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        value = clean_value(super().pre_save(model_instance, add))  # type: ignore[misc]
        setattr(model_instance, self.attname, value)  # type: ignore[attr-defined]
        return value

    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(clean_value(value))  # type: ignore[misc]


class CleanTextField(_CleansWhatItSaves, models.TextField):
    pass


class CleanCharField(_CleansWhatItSaves, models.CharField):
    pass


class CleanJSONField(_CleansWhatItSaves, models.JSONField):
    pass

"""Model fields of the papers app that clean what they save (papers.cleaning), so text from PDFs,
feeds and files can never make PostgreSQL refuse a row. Used for every free-text column."""
from __future__ import annotations

from typing import Any

from django.db import models

from papers.cleaning import clean_text, clean_value


class CleanTextField(models.TextField):
    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        return clean_text(value) if isinstance(value, str) else value


class CleanCharField(models.CharField):
    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        return clean_text(value) if isinstance(value, str) else value


class CleanJSONField(models.JSONField):
    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(clean_value(value))

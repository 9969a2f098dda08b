"""Django admin for the ontology: inspect entities, facts, their revision log, extraction runs and
rejected model outputs.

Facts are read-only here on purpose: every change to a fact must go through the review services
(the review queue or the API), which validate it against the schema and record a FactRevision.
"""
from __future__ import annotations

from django.contrib import admin

from ontology.models import (
    Entity,
    ExtractionRun,
    Fact,
    FactRevision,
    FactTechnique,
    RejectedOutput,
    SearchDocument,
    SearchStats,
    SearchTerm,
    Technique,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written by the pipeline or the review services; the admin only shows them."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "key"]
    list_filter = ["kind"]
    search_fields = ["name", "key"]


class FactRevisionInline(admin.TabularInline):
    model = FactRevision
    extra = 0
    can_delete = False
    fields = ["created_at", "action", "actor", "note"]
    readonly_fields = fields


@admin.register(Fact)
class FactAdmin(ReadOnlyAdmin):
    list_display = ["paper", "kind", "subject", "parameter", "value", "unit", "status", "extractor", "confidence"]
    list_filter = ["kind", "status", "extractor"]
    search_fields = ["subject", "parameter", "quote", "paper__arxiv_id"]
    list_select_related = ["paper"]
    inlines = [FactRevisionInline]


@admin.register(FactRevision)
class FactRevisionAdmin(ReadOnlyAdmin):
    list_display = ["fact", "action", "actor", "created_at"]
    list_filter = ["action"]
    list_select_related = ["fact"]


@admin.register(ExtractionRun)
class ExtractionRunAdmin(ReadOnlyAdmin):
    list_display = ["paper", "status", "llm_s", "total_s", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["paper__arxiv_id", "error"]
    list_select_related = ["paper"]


@admin.register(RejectedOutput)
class RejectedOutputAdmin(ReadOnlyAdmin):
    list_display = ["paper", "extractor", "error", "created_at"]
    list_filter = ["extractor"]
    search_fields = ["error", "raw"]
    list_select_related = ["paper"]


@admin.register(SearchDocument)
class SearchDocumentAdmin(ReadOnlyAdmin):
    list_display = ["doc_type", "paper", "text"]
    list_filter = ["doc_type"]
    list_select_related = ["paper"]


class TriggerKeptAdmin(ReadOnlyAdmin):
    """Keyword statistics the database triggers keep; a hand edit would skew every BM25 score."""

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SearchTerm)
class SearchTermAdmin(TriggerKeptAdmin):
    list_display = ["lexeme", "df"]
    search_fields = ["lexeme"]
    ordering = ["-df"]


@admin.register(SearchStats)
class SearchStatsAdmin(TriggerKeptAdmin):
    list_display = ["doc_type", "docs", "lexemes"]


@admin.register(Technique)
class TechniqueAdmin(ReadOnlyAdmin):
    """Techniques come from ontology/data/techniques.json; edit the file, then `link_techniques`."""

    list_display = ["name", "title"]
    search_fields = ["name", "title"]


@admin.register(FactTechnique)
class FactTechniqueAdmin(ReadOnlyAdmin):
    """A person links facts in the wiki, where the change is recorded as a revision."""

    list_display = ["technique", "fact", "linked_by", "created_at"]
    list_filter = ["linked_by", "technique"]
    list_select_related = ["technique", "fact"]

"""Django admin for the papers models: a person can inspect and fix any crawled or parsed row,
see why a paper failed, and re-run it (the action resets it to "new" and queues its pipeline).
"""
from __future__ import annotations

from django.contrib import admin, messages

from papers.models import (
    Author,
    CodeRepo,
    IdentityConflict,
    Paper,
    PaperAuthor,
    PaperPage,
    PaperRepo,
    PipelineEvent,
    Section,
    SourceHealth,
    Table,
)
from papers.models.digest import DigestDelivery, Subscription
from papers.models.scoring import Score


class PaperAuthorInline(admin.TabularInline):
    model = PaperAuthor
    extra = 0
    autocomplete_fields = ["author"]


class PaperRepoInline(admin.TabularInline):
    model = PaperRepo
    extra = 0
    autocomplete_fields = ["repo"]


class SectionInline(admin.TabularInline):
    model = Section
    extra = 0
    fields = ["order", "number", "title", "page_start", "page_end"]
    show_change_link = True


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = ["arxiv_id", "version", "title", "status", "failure_stage", "published", "page_count"]
    list_filter = ["status", "failure_stage", "primary_category"]
    search_fields = ["arxiv_id", "title", "abstract"]
    readonly_fields = ["created_at", "updated_at", "pdf_sha256", "pdf_path"]
    inlines = [PaperAuthorInline, PaperRepoInline, SectionInline]
    actions = ["rerun_pipeline"]

    @admin.action(description="Re-run download and parse for the selected papers")
    def rerun_pipeline(self, request, queryset) -> None:
        from papers.tasks import pipeline_for

        ids = list(queryset.values_list("pk", flat=True))
        queryset.update(status=Paper.Status.NEW, failure_stage="", failure_reason="", pdf_sha256="")
        for paper_id in ids:
            pipeline_for(paper_id).apply_async()
        self.message_user(request, f"queued {len(ids)} paper(s)", messages.SUCCESS)


@admin.register(IdentityConflict)
class IdentityConflictAdmin(admin.ModelAdmin):
    """PDFs that named the arXiv id of another stored paper: each waits here until a person decides
    (merge by hand, re-ingest with --arxiv-id, or mark it resolved)."""

    list_display = ["paper", "claimed", "hint_source", "reason", "resolved", "created_at"]
    list_filter = ["resolved", "hint_source"]
    search_fields = ["paper__arxiv_id", "paper__title", "claimed__arxiv_id", "claimed__title"]
    raw_id_fields = ["paper", "claimed"]
    readonly_fields = ["pdf_sha256", "created_at"]
    actions = ["mark_resolved"]

    @admin.action(description="Mark the selected conflicts resolved")
    def mark_resolved(self, request, queryset) -> None:
        count = queryset.update(resolved=True)
        self.message_user(request, f"{count} conflict(s) marked resolved", messages.SUCCESS)


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(PaperAuthor)
class PaperAuthorAdmin(admin.ModelAdmin):
    list_display = ["paper", "author", "position"]
    raw_id_fields = ["paper", "author"]


@admin.register(CodeRepo)
class CodeRepoAdmin(admin.ModelAdmin):
    list_display = ["full_name", "stars", "forks", "license_spdx", "has_ci", "archived", "pushed_at", "fetched_at"]
    list_filter = ["has_ci", "archived", "license_spdx"]
    search_fields = ["full_name", "description"]
    readonly_fields = ["etags", "fetched_at"]


@admin.register(PaperRepo)
class PaperRepoAdmin(admin.ModelAdmin):
    list_display = ["paper", "repo", "source", "official"]
    list_filter = ["source", "official"]
    raw_id_fields = ["paper", "repo"]


@admin.register(Section)
class SectionAdmin(admin.ModelAdmin):
    list_display = ["paper", "order", "number", "title", "page_start", "page_end"]
    search_fields = ["title", "paper__arxiv_id"]
    raw_id_fields = ["paper"]


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ["paper", "order", "page", "caption", "n_rows", "n_cols"]
    search_fields = ["caption", "paper__arxiv_id"]
    raw_id_fields = ["paper"]


@admin.register(PipelineEvent)
class PipelineEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "level", "stage", "paper", "repo", "message"]
    list_filter = ["level", "stage"]
    search_fields = ["message", "paper__arxiv_id", "repo__full_name"]
    raw_id_fields = ["paper", "repo"]


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    """Scores are computed; the admin shows them (and their history) but never edits them."""

    list_display = ["paper", "total", "tier", "quadrant", "is_latest", "scored_at"]
    list_filter = ["tier", "quadrant", "is_latest"]
    search_fields = ["paper__arxiv_id", "paper__title"]
    list_select_related = ["paper"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["email", "status", "min_score", "next_digest_at", "last_digest_at"]
    list_filter = ["status"]
    search_fields = ["email"]


@admin.register(DigestDelivery)
class DigestDeliveryAdmin(admin.ModelAdmin):
    list_display = ["subscription", "period_start", "status", "attempts", "sent_at"]
    list_filter = ["status"]
    search_fields = ["subscription__email", "error"]
    list_select_related = ["subscription"]


@admin.register(SourceHealth)
class SourceHealthAdmin(admin.ModelAdmin):
    list_display = ["name", "reachable", "unreachable_since", "last_ok_at", "next_try_at", "checked_at"]
    readonly_fields = ["checked_at"]


@admin.register(PaperPage)
class PaperPageAdmin(admin.ModelAdmin):
    list_display = ["paper", "number"]
    search_fields = ["paper__arxiv_id", "paper__title"]
    list_select_related = ["paper"]

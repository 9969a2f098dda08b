"""Django admin for the advisor's database rows: the Hugging Face model specs cached by revision, saved setups."""
from __future__ import annotations

from django.contrib import admin

from advisor.models import HubModel, SavedSetup


@admin.register(HubModel)
class HubModelAdmin(admin.ModelAdmin):
    list_display = ["repo_id", "revision", "fetched_at"]
    search_fields = ["repo_id"]
    readonly_fields = ["fetched_at"]


@admin.register(SavedSetup)
class SavedSetupAdmin(admin.ModelAdmin):
    list_display = ("user", "updated_at")
    readonly_fields = ("updated_at",)

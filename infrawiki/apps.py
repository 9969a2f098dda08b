"""App configs: the project's own app (its one model, RateCounter) and the admin with a login whose
failed attempts are limited like the site's (infrawiki.admin_site)."""
from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class InfrawikiConfig(AppConfig):
    default = True  # the config of INSTALLED_APPS' "infrawiki" (this module holds two)
    name = "infrawiki"
    default_auto_field = "django.db.models.BigAutoField"


class AdminConfig(admin_apps.AdminConfig):
    default = False
    default_site = "infrawiki.admin_site.AdminSite"

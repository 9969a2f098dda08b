"""Every model is in the Django admin, and every admin list renders for a superuser."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import User

APPS = ("papers", "ontology", "advisor")


def project_models():
    return [model for label in APPS for model in apps.get_app_config(label).get_models()]


def test_every_project_model_is_registered_in_the_admin() -> None:
    missing = [model._meta.label for model in project_models() if not admin.site.is_registered(model)]
    assert missing == []


@pytest.mark.django_db
def test_every_admin_list_renders(client) -> None:
    client.force_login(User.objects.create_superuser("root", "root@example.org", "root-pw-2026"))
    for model in project_models():
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert client.get(url).status_code == 200, url

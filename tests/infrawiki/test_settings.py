"""Settings come from the environment and fail loudly on bad values."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from tests.conftest import ROOT

# Browser tests set this in-process for Playwright; a deployment must never have it.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}


def run_check(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", *args], cwd=ROOT, env={**CLEAN_ENV, **env},
        capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [("DEBUG", "maybe"), ("PDF_MAX_BYTES", "ten"), ("ARXIV_DELAY_S", "-1"), ("CELERY_BROKER_URL", "ftp://x"),
     ("CELERY_BROKER_TRANSPORT_OPTIONS", "{nope"), ("CACHE_URL", "memcached://x")],
)
def test_a_bad_setting_stops_the_start_with_a_message_naming_the_variable(name: str, value: str) -> None:
    result = run_check(**{name: value})
    assert result.returncode != 0
    assert name in result.stderr


def test_valid_settings_pass_the_system_check() -> None:
    result = run_check(DEBUG="false")
    assert result.returncode == 0, result.stderr


@pytest.mark.django_db
def test_the_database_has_pgvector_installed_by_a_migration() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    assert row is not None and row[0].startswith("0.")


def test_production_settings_pass_the_deployment_check() -> None:
    result = run_check("--deploy", "--fail-level", "WARNING", PRODUCTION="1",
                       SECRET_KEY="x" * 20 + "-long-random-production-secret-" + "y" * 20,
                       ALLOWED_HOSTS="infrawiki.example.org")
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key() -> None:
    env = {k: v for k, v in CLEAN_ENV.items() if k != "SECRET_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env={**env, "PRODUCTION": "1"},
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr

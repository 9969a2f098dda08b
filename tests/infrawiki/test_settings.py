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


def _print_settings(data_dir, *names: str, **env: str) -> list[str]:
    from infrawiki.runtime import database_url

    env = {k: v for k, v in {**CLEAN_ENV, **env}.items() if k not in ("SECRET_KEY", "SITE_URL")}
    code = "from django.conf import settings; " + "; ".join(f"print(settings.{n})" for n in names)
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**env, "INFRAWIKI_DATA_DIR": str(data_dir), "DATABASE_URL": database_url(connection.settings_dict)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.mark.django_db
def test_outside_production_each_installation_signs_with_its_own_persisted_key(tmp_path) -> None:
    first = _print_settings(tmp_path / "a", "SECRET_KEY")
    assert first == _print_settings(tmp_path / "a", "SECRET_KEY")  # kept across restarts
    assert first != _print_settings(tmp_path / "b", "SECRET_KEY")  # not a constant shared by every copy
    assert len(first[0]) >= 32 and "insecure" not in first[0]
    assert (tmp_path / "a" / "secret_key").stat().st_mode & 0o077 == 0


@pytest.mark.django_db
def test_email_links_use_the_port_the_site_is_served_on(tmp_path) -> None:
    assert _print_settings(tmp_path, "SITE_URL", INFRAWIKI_PORT="8123") == ["http://127.0.0.1:8123"]

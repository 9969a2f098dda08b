"""`/health` says why the database is unavailable without showing anyone the server's paths.

The page is public; the socket path and the data directory it once printed belong in the log.
"""
from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client


@pytest.fixture
def database_down(django_db_blocker, tmp_path):
    """The default connection pointed at a socket directory where no server listens."""
    with django_db_blocker.unblock():
        saved = dict(connection.settings_dict)
        connection.close()
        connection.settings_dict.update(HOST=str(tmp_path / "no-server-here"), PORT="5432")
        try:
            yield tmp_path
        finally:
            connection.close()
            connection.settings_dict.clear()
            connection.settings_dict.update(saved)


def test_health_with_the_database_down_gives_a_reason_but_no_path(database_down):
    response = Client().get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert str(database_down) not in response.content.decode() and "/" not in body["database"]
    assert ".s.PGSQL" not in body["database"]
    assert "No such file or directory" in body["database"] or "failed" in body["database"]


@pytest.mark.django_db
def test_health_with_the_database_up_is_ok():
    assert Client().get("/health").json() == {"status": "ok", "database": "ok"}

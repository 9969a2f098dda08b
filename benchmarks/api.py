"""`make bench-api`: load test of the REST API on loopback against gunicorn, as deployed (Procfile).

Runs by hand or in CI, never at import. It creates a throw-away database on the configured
PostgreSQL, fills it (the seed corpus when `load_seed` exists, topped up with generated papers so
every list page is full), starts gunicorn on a free loopback port, and drives it with an asyncio
HTTP client at 16 concurrent clients for a fixed time per endpoint:

- GET /health            — the anchor: one trivial query, the floor any endpoint pays
- GET /api/papers/       — target >= 150 req/s, p99 < 250 ms, no errors (pages are cached API_LIST_CACHE_S)
- GET /api/papers/?miss=N — every request a cache miss: the database path, for comparison
- POST /api/advisor/recommend

It prints one table (req/s, p50/p95/p99 ms, errors, ratio to the anchor) and writes the figures to
bench-results/api.json; exit status 1 when the paper-list target is missed or any request failed.
Nothing is installed or downloaded; the client is plain asyncio over TCP.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADVISOR_BODY = {"gpu": "A100-SXM4-40GB", "gpu_count": 1, "cuda": "12.1", "model": "meta-llama/Llama-3.1-8B-Instruct",
                "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16},
                "sla": {"p95_latency_ms": 5000}}
TARGET_RPS, TARGET_P99_MS = 150.0, 250.0


@dataclass
class Result:
    name: str
    requests: int
    errors: int
    seconds: float
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    ratio_to_anchor: float = 1.0
    first_error: str = ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _percentile(sorted_ms: list[float], pct: float) -> float:
    if not sorted_ms:
        return 0.0
    index = min(len(sorted_ms) - 1, max(0, round(pct / 100 * len(sorted_ms)) - 1))
    return sorted_ms[index]


async def _request(port: int, raw: bytes) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        data = await reader.read()
    finally:
        writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, body


def _raw(method: str, path: str, body: dict | None) -> bytes:
    payload = json.dumps(body).encode() if body is not None else b""
    headers = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Accept: application/json", "Connection: close"]
    if body is not None:
        headers += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + payload


async def _drive(port: int, name: str, method: str, path: str, body: dict | None,
                 clients: int, seconds: float) -> Result:
    # "{n}" in a path becomes a fresh number per request (a cache miss every time).
    fixed = _raw(method, path, body) if "{n}" not in path else None
    counter = iter(range(10**9))
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def client() -> None:
        while time.perf_counter() < deadline:
            raw = fixed or _raw(method, path.format(n=next(counter)), body)
            start = time.perf_counter()
            try:
                status, payload = await asyncio.wait_for(_request(port, raw), timeout=60)
            except (OSError, TimeoutError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            latencies.append((time.perf_counter() - start) * 1000)
            if status != 200:
                errors.append(f"HTTP {status}: {payload[:200]!r}")

    began = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - began
    ordered = sorted(latencies)
    done = len(latencies)
    return Result(name, done, len(errors), round(elapsed, 2), round(done / elapsed, 1),
                  round(statistics.median(ordered), 1) if ordered else 0.0,
                  round(_percentile(ordered, 95), 1), round(_percentile(ordered, 99), 1),
                  first_error=errors[0] if errors else "")


def _prepare_database(min_papers: int) -> str:
    """Create and fill a throw-away database; returns its URL (the caller drops it)."""
    from django.core.management import call_command, get_commands
    from django.db import connection

    from infrawiki.runtime import database_url

    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    if "load_seed" in get_commands():
        call_command("load_seed", verbosity=0)
    _top_up(min_papers)
    return database_url(connection.settings_dict)


def _top_up(min_papers: int) -> None:
    """Generated papers (with scores) so the list endpoint always serves full pages."""
    from django.utils import timezone

    from papers.models import Paper
    from papers.models.scoring import Score

    missing = max(0, min_papers - Paper.objects.count())
    now = timezone.now()
    papers = Paper.objects.bulk_create(
        Paper(arxiv_id=f"bench.{i:05d}", title=f"Generated paper {i} on KV cache scheduling",
              abstract="Generated for the API benchmark.", published=now, status="extracted")
        for i in range(missing)
    )
    Score.objects.bulk_create(
        Score(paper=p, total=(i % 100) / 10, code_availability=1, experimental_realism=1, parameter_transparency=1,
              community_feedback=1, tier="to_verify", production_value=2, implementation_cost=2,
              quadrant="fill_in", fingerprint=f"bench-{i}", scored_at=now)
        for i, p in enumerate(papers)
    )


def _drop_database() -> None:
    from django.db import connection

    connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)


def _start_gunicorn(db_url: str, port: int, workers: int) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": db_url, "API_THROTTLE_ANON": "1000000/second",
           "API_THROTTLE_USER": "1000000/second", "LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "infrawiki.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--graceful-timeout", "5", "--log-level", "warning",
         # The advisor's first request per worker loads its embedding model; under 16 queued clients
         # that can pass gunicorn's default 30 s worker timeout, which would measure restarts instead.
         "--timeout", "120"],
        cwd=ROOT, env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode} before serving")
        try:
            status, _ = asyncio.run(_request(port, _raw("GET", "/health", None)))
            if status == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("gunicorn did not answer /health within 60 s")


def _stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=15)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0, help="per endpoint")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "4")))
    parser.add_argument("--papers", type=int, default=200)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "api.json")
    args = parser.parse_args(argv)

    db_url = _prepare_database(args.papers)
    port = _free_port()
    server = _start_gunicorn(db_url, port, args.workers)
    try:
        plan = [("GET /health (anchor)", "GET", "/health", None),
                ("GET /api/papers/", "GET", "/api/papers/", None),
                ("GET /api/papers/ (cache miss)", "GET", "/api/papers/?miss={n}", None),
                ("POST /api/advisor/recommend", "POST", "/api/advisor/recommend", ADVISOR_BODY)]
        results = []
        for name, method, path, body in plan:
            # Warm every worker first (imports; the advisor's catalogs and embedding model load on first use).
            asyncio.run(_drive(port, "warm-up", method, path, body, args.workers, 0.01))
            results.append(asyncio.run(_drive(port, name, method, path, body, args.clients, args.seconds)))
    finally:
        _stop(server)
        _drop_database()
    anchor = results[0].rps or 1.0
    for result in results:
        result.ratio_to_anchor = round(result.rps / anchor, 3)
    print(f"{args.clients} clients, {args.seconds:g} s per endpoint, gunicorn --workers {args.workers}, "
          f"{os.cpu_count()} CPUs")
    print(f"{'endpoint':32} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>7} {'vs anchor':>9}")
    for r in results:
        print(f"{r.name:32} {r.rps:8.1f} {r.p50_ms:8.1f} {r.p95_ms:8.1f} {r.p99_ms:8.1f} {r.errors:7d} "
              f"{r.ratio_to_anchor:9.3f}")
        if r.first_error:
            print(f"  first error: {r.first_error}")
    papers = results[1]
    ok = papers.rps >= TARGET_RPS and papers.p99_ms < TARGET_P99_MS and all(r.errors == 0 for r in results)
    print(f"paper list target (>= {TARGET_RPS:g} req/s, p99 < {TARGET_P99_MS:g} ms, no errors): "
          f"{'met' if ok else 'MISSED'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"clients": args.clients, "seconds": args.seconds, "workers": args.workers,
                                    "results": [asdict(r) for r in results], "target_met": ok}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

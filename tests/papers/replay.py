"""Loopback HTTP servers that replay recorded traffic of arXiv and GitHub (the network edge only).

- ArxivReplay serves corpus/arxiv_atom/arxiv_py_2026_recorded: each *.json records a request URL,
  a status and the Atom body. A request matches on search_query, id_list, start and max_results
  (the sort order is not part of the key). Optionally, PDF links in the bodies are pointed at this
  server, which then serves one corpus PDF for /pdf/<id> — arXiv's PDF host, replayed.
- GithubReplay serves corpus/github_api/pygithub_replaydata (PyGithub's 10-line records) by path;
  it honours If-None-Match with the recorded ETag (304), like GitHub, and can be told to answer
  with a rate limit (the recorded headers with X-RateLimit-Remaining: 0) to test backoff.
Unknown paths get 404 with GitHub's JSON body. Every request is logged in `requests`.
"""
from __future__ import annotations

import ast
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse


class _Handler(BaseHTTPRequestHandler):
    server: ReplayServer

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.server.requests.append({"path": self.path, "headers": dict(self.headers), "at": time.monotonic()})
        status, headers, body = self.server.answer(self.path, dict(self.headers))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class ReplayServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()

    def answer(self, path: str, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        raise NotImplementedError


def _arxiv_key(url: str) -> tuple:
    args = parse_qs(urlparse(url).query, keep_blank_values=True)
    return tuple(args.get(name, [""])[0] for name in ("search_query", "id_list", "start", "max_results"))


class ArxivReplay(ReplayServer):
    def __init__(self, recorded_dir: Path, pdf: Path | None = None) -> None:
        super().__init__()
        self.pdf = pdf
        self.overrides: dict[tuple, tuple[int, str, bytes]] = {}
        self.records: dict[tuple, tuple[int, str]] = {}
        for path in sorted(recorded_dir.glob("*.json")):
            record = json.loads(path.read_text())
            self.records[_arxiv_key(record["url"])] = (record["status_code"], record["body"])

    def answer(self, path: str, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        if path.startswith("/pdf/") and self.pdf is not None:
            return 200, [("Content-Type", "application/pdf")], self.pdf.read_bytes()
        key = _arxiv_key(path)
        if key in self.overrides:
            status, content_type, body = self.overrides[key]
            return status, [("Content-Type", content_type)], body
        if key not in self.records:
            return 404, [("Content-Type", "text/plain")], b"no recording for this request"
        status, body = self.records[key]
        if self.pdf is not None:
            body = body.replace("http://arxiv.org/pdf/", f"{self.url}/pdf/")
            body = body.replace("https://arxiv.org/pdf/", f"{self.url}/pdf/")
        return status, [("Content-Type", "application/atom+xml; charset=utf-8")], body.encode()


def read_pygithub_records(path: Path) -> list[dict]:
    """PyGithub replay records: scheme, method, host, port, path, req headers, req body, status,
    response headers (a Python list of tuples), response body — separated by blank lines."""
    lines = path.read_text().split("\n")
    records = []
    i = 0
    while i + 9 < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        records.append({"method": lines[i + 1], "path": lines[i + 4], "status": int(lines[i + 7]),
                        "headers": ast.literal_eval(lines[i + 8]), "body": lines[i + 9]})
        i += 10
    return records


_DROP = {"content-encoding", "transfer-encoding", "content-length", "status"}


class GithubReplay(ReplayServer):
    def __init__(self, replay_dir: Path) -> None:
        super().__init__()
        self.routes: dict[str, dict] = {}
        for path in sorted(replay_dir.glob("*.txt")):
            for record in read_pygithub_records(path):
                self.routes.setdefault(urlparse(record["path"]).path, record)
        self.rate_limited: dict[str, int] = {}  # path -> status (403 or 429) to answer with
        self.missing: set[str] = set()
        self.forbidden: set[str] = set()  # paths answered 403 without a rate limit (no access)

    def answer(self, path: str, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        route = urlparse(path).path
        record = self.routes.get(route)
        if route in self.rate_limited and record is not None:
            reset = str(int(time.time()) + 2)
            limited = [(k, v) for k, v in record["headers"] if k.lower() not in _DROP | {"x-ratelimit-remaining",
                                                                                         "x-ratelimit-reset"}]
            limited += [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", reset)]
            body = b'{"message":"API rate limit exceeded","documentation_url":"https://docs.github.com/rest"}'
            return self.rate_limited[route], limited, body
        if route in self.forbidden:
            return 403, [("Content-Type", "application/json")], (
                b'{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}')
        if record is None or route in self.missing:
            return 404, [("Content-Type", "application/json")], (
                b'{"message":"Not Found","documentation_url":"https://docs.github.com/rest","status":"404"}')
        out = [(k, v) for k, v in record["headers"] if k.lower() not in _DROP]
        etag = next((v for k, v in record["headers"] if k.lower() == "etag"), "")
        if etag and headers.get("If-None-Match") == etag:
            return 304, out, b""
        return record["status"], out, record["body"].encode()


class PdfHost(ReplayServer):
    """A loopback PDF host: `routes` maps a path to (status, headers, body); unknown paths 404."""

    def __init__(self) -> None:
        super().__init__()
        self.routes: dict[str, tuple[int, list[tuple[str, str]], bytes]] = {}

    def serve_pdf(self, path: str, content: bytes) -> str:
        self.routes[path] = (200, [("Content-Type", "application/pdf")], content)
        return f"{self.url}{path}"

    def answer(self, path: str, headers: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        return self.routes.get(path, (404, [("Content-Type", "text/plain")], b"not found"))

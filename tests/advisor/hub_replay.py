"""A loopback server replaying Hugging Face Hub responses (tests/advisor/data/hub/hub_fixtures.json says where
each body was read), for the Hub tests and the browser test of an unknown model."""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = json.loads((Path(__file__).parent / "data" / "hub" / "hub_fixtures.json").read_text())


class Replay(BaseHTTPRequestHandler):
    """GET /api/models/{repo}[/revision/{rev}] and GET /{repo}/resolve/{rev}/config.json, as the Hub answers them."""

    state: dict[str, Any] = {}

    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's name
        path = self.path.split("?")[0]
        self.state["auth"].append(self.headers.get("Authorization"))
        api = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/.+)?", path)
        config = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/config\.json", path)
        repo = (api or config).group(1) if (api or config) else None
        if repo in FIXTURES["errors"]:
            err = FIXTURES["errors"][repo]
            return self._send(err["status"], {"error": err["X-Error-Message"]},
                              {"X-Error-Code": err["X-Error-Code"], "X-Error-Message": err["X-Error-Message"]})
        if repo not in FIXTURES["repos"]:
            return self._send(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
        fixture = FIXTURES["repos"][repo]
        if api:
            return self._send(200, {**fixture["api"], "sha": self.state["sha"].get(repo, fixture["api"]["sha"])})
        self.state["config_downloads"].append((repo, config.group(2)))
        return self._send(200, fixture["config"])


@contextmanager
def replay_hub() -> Iterator[tuple[str, dict[str, Any]]]:
    """(endpoint URL, state) of a running replay: state records auth headers, config downloads, and takes
    per-repo revision overrides under "sha"."""
    Replay.state = {"auth": [], "config_downloads": [], "sha": {}}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", Replay.state
    finally:
        server.shutdown()
        server.server_close()

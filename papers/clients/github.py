"""A small GitHub REST client: conditional requests (ETag / 304) and rate limits as data.

Used by the GitHub sync service. A rate-limited answer (403/429 with X-RateLimit-Remaining: 0,
or Retry-After) raises `RateLimited` carrying when to try again, so the Celery task can retry
with that countdown instead of failing; other 4xx answers raise `GithubError` (permanent).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import requests

_SECONDARY_LIMIT_WAIT_S = 60


class GithubError(Exception):
    """A permanent GitHub answer (404, 401, 403 without rate limit...) with a reason a person can act on."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class RateLimited(Exception):
    """GitHub asked us to wait; `wait_s` says how long (from X-RateLimit-Reset or Retry-After)."""

    def __init__(self, wait_s: int, path: str) -> None:
        super().__init__(f"GitHub rate limit reached on {path}; retry in {wait_s} s")
        self.wait_s = wait_s
        self.path = path


@dataclass
class GithubResponse:
    status: int
    data: Any
    etag: str
    text: str = ""

    @property
    def not_modified(self) -> bool:
        return self.status == 304


def rate_limit_wait(response: requests.Response, now: float | None = None) -> int | None:
    """Seconds to wait when `response` is a rate-limit answer, else None."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    if headers.get("Retry-After", "").isdigit():
        return max(1, int(headers["Retry-After"]))
    if headers.get("X-RateLimit-Remaining") == "0" and headers.get("X-RateLimit-Reset", "").isdigit():
        return max(1, int(headers["X-RateLimit-Reset"]) - int(now if now is not None else time.time()) + 1)
    if response.status_code == 429:
        return _SECONDARY_LIMIT_WAIT_S
    return None


class GithubClient:
    def __init__(self, base_url: str, token: str = "", timeout_s: float = 20.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.session = requests.Session()
        self.session.headers.update({
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "InfraWiki-crawler",
        })
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str, *, params: dict[str, Any] | None = None, etag: str = "", raw: bool = False
            ) -> GithubResponse:
        """GET `path`; 304 when `etag` still matches. Raises RateLimited / GithubError / requests errors."""
        headers = {"If-None-Match": etag} if etag else {}
        if raw:
            headers["Accept"] = "application/vnd.github.raw+json"
        response = self.session.get(f"{self.base_url}{path}", params=params, headers=headers,
                                    timeout=self.timeout_s)
        wait = rate_limit_wait(response)
        if wait is not None:
            raise RateLimited(wait, path)
        new_etag = response.headers.get("ETag", "")
        if response.status_code == 304:
            return GithubResponse(304, None, etag)
        if response.status_code >= 500:
            response.raise_for_status()  # transient: the caller's retry policy handles it
        if response.status_code >= 400:
            raise GithubError(response.status_code, _reason(response, path))
        if raw:
            return GithubResponse(response.status_code, None, new_etag, response.text)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):  # every endpoint read here answers a JSON object
            raise GithubError(response.status_code, f"GitHub answered {path} with a body that is not a JSON object")
        return GithubResponse(response.status_code, data, new_etag)


def _reason(response: requests.Response, path: str) -> str:
    try:
        message = response.json().get("message", "")
    except ValueError:
        message = response.text[:200]
    hints = {
        401: "the GITHUB_TOKEN is invalid or expired",
        403: "access denied (private repository or token without scope)",
        404: "not found: the repository was renamed, deleted or made private; check the link",
    }
    return f"GitHub {response.status_code} for {path}: {message or 'no message'} — {hints.get(response.status_code, '')}".rstrip(" —")

"""Downloading a paper PDF safely: allowed hosts only, no private or loopback addresses (unless a
test setting allows the loopback replay server), a size cap, timeouts, redirects re-checked.

Used by the download service of the pipeline. Raises DownloadError; `permanent` says whether
retrying could help (a timeout may pass, a 404 or an oversized file will not).
"""
from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlparse

import requests

_MAX_REDIRECTS = 5
_CHUNK = 64 * 1024


class DownloadError(Exception):
    def __init__(self, reason: str, *, permanent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


@dataclass
class DownloadPolicy:
    allowed_hosts: list[str]
    max_bytes: int
    timeout_s: float
    allow_loopback: bool = False


def _host_allowed(host: str, allowed: list[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == a.lower() or host.endswith("." + a.lower()) for a in allowed)


def check_url(url: str, policy: DownloadPolicy) -> None:
    """Refuse URLs whose scheme, host or resolved addresses the policy does not allow."""
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DownloadError(f"refused {url!r}: only http(s) URLs with a host can be downloaded", permanent=True)
    if not _host_allowed(parts.hostname, policy.allowed_hosts):
        raise DownloadError(
            f"refused {url}: host {parts.hostname} is not in DOWNLOAD_ALLOWED_HOSTS "
            f"({', '.join(policy.allowed_hosts)}); add it there if it is trusted", permanent=True)
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except socket.gaierror as exc:
        raise DownloadError(f"cannot resolve {parts.hostname}: {exc}", permanent=False) from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if address.is_loopback and policy.allow_loopback:
            continue
        if not address.is_global:
            raise DownloadError(
                f"refused {url}: {parts.hostname} resolves to the non-public address {address}", permanent=True)


def fetch_pdf(url: str, policy: DownloadPolicy) -> bytes:
    """The PDF bytes at `url`, following up to 5 redirects, each re-checked against the policy."""
    deadline = time.monotonic() + policy.timeout_s
    for _ in range(_MAX_REDIRECTS + 1):
        check_url(url, policy)
        try:
            response = requests.get(url, stream=True, allow_redirects=False, timeout=policy.timeout_s,
                                    headers={"User-Agent": "InfraWiki-crawler"})
        except requests.Timeout as exc:
            raise DownloadError(f"timed out after {policy.timeout_s:.0f} s fetching {url}", permanent=False) from exc
        except requests.ConnectionError as exc:
            raise DownloadError(f"could not connect to fetch {url}: {exc}", permanent=False) from exc
        with response:
            if response.is_redirect:
                url = urljoin(url, response.headers.get("Location", ""))
                continue
            _check_status(response, url)
            return _read_capped(response, url, policy, deadline)
    raise DownloadError(f"too many redirects fetching {url}", permanent=True)


def _check_status(response: requests.Response, url: str) -> None:
    status = response.status_code
    if status == 429 or status >= 500:
        raise DownloadError(f"HTTP {status} fetching {url}; the server is busy, will retry", permanent=False)
    if status != 200:
        raise DownloadError(f"HTTP {status} fetching {url}; check the PDF link", permanent=True)


def _read_capped(response: requests.Response, url: str, policy: DownloadPolicy, deadline: float) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > policy.max_bytes:
        raise DownloadError(
            f"{url} is {int(declared):,} bytes, over PDF_MAX_BYTES={policy.max_bytes:,}; raise the cap to accept it",
            permanent=True)
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(_CHUNK):
        size += len(chunk)
        if size > policy.max_bytes:
            raise DownloadError(
                f"{url} exceeded PDF_MAX_BYTES={policy.max_bytes:,} while downloading; raise the cap to accept it",
                permanent=True)
        if time.monotonic() > deadline:
            raise DownloadError(f"download of {url} took longer than {policy.timeout_s:.0f} s", permanent=False)
        chunks.append(chunk)
    body = b"".join(chunks)
    if body.lstrip()[:5] != b"%PDF-":
        kind = response.headers.get("Content-Type", "unknown type")
        raise DownloadError(f"{url} did not return a PDF (got {kind}); check the link", permanent=True)
    return body

"""Downloading a paper PDF safely: allowed hosts only (checked on the host the HTTP client connects to), no private or loopback addresses (unless a
test setting allows the loopback replay server), a size cap, timeouts, redirects re-checked.

Used by the download service of the pipeline. Raises DownloadError; `permanent` says whether
retrying could help (a timeout may pass, a 404 or an oversized file will not).
"""
from __future__ import annotations

import ipaddress
import re
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlparse

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

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


# Hosts made only of digits, dots and hex markers are IP addresses to some resolvers (inet_aton reads
# "2130706433", "0177.0.0.1" and "0x7f.1" as 127.0.0.1); only the canonical forms are accepted.
_NUMERIC_HOST = re.compile(r"[0-9a-fx.]+", re.IGNORECASE)


@dataclass(frozen=True)
class Target:
    """Where the HTTP client will connect for a URL: scheme, host (no brackets) and port."""

    scheme: str
    host: str
    port: int


def connect_target(url: str) -> Target:
    """The scheme, host and port `requests` will connect to for `url`, read with its own parser.

    `requests` prepares a URL (IDNA, quoting) and hands it to urllib3, whose parser decides the
    host; the standard library's `urlparse` may read the same string differently (a backslash, an
    "@" in the path), so the check uses the prepared URL and refuses any URL the two read apart,
    any userinfo, and any host that is percent-encoded or a non-canonical IP address.
    """
    refuse = f"refused {url!r}"
    if any(ch.isspace() or ord(ch) < 32 or ch == "\\" for ch in url):
        raise DownloadError(f"{refuse}: the URL contains a backslash, a space or a control character",
                            permanent=True)
    try:
        prepared = requests.Request("GET", url).prepare().url or ""
        parts = parse_url(prepared)
    except (requests.RequestException, LocationParseError, ValueError) as exc:
        raise DownloadError(f"{refuse}: not a valid URL ({exc})", permanent=True) from exc
    if parts.scheme not in ("http", "https") or not parts.host:
        raise DownloadError(f"{refuse}: only http(s) URLs with a host can be downloaded", permanent=True)
    if parts.auth is not None or "@" in (urlparse(url).netloc or ""):
        raise DownloadError(f"{refuse}: URLs with a user name or password are not downloaded", permanent=True)
    host = parts.host.lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if "%" in host:
        raise DownloadError(f"{refuse}: percent-encoded hosts are not accepted", permanent=True)
    if (urlparse(prepared).hostname or "").lower() != host:
        raise DownloadError(f"{refuse}: the URL is ambiguous (parsers disagree on its host)", permanent=True)
    if _NUMERIC_HOST.fullmatch(host) or ":" in host:
        try:
            host = str(ipaddress.ip_address(host))
        except ValueError:
            raise DownloadError(f"{refuse}: {host} is not a canonical IP address", permanent=True) from None
    return Target(parts.scheme, host, parts.port or (443 if parts.scheme == "https" else 80))


def _address_allowed(address: str, policy: DownloadPolicy) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_loopback and policy.allow_loopback) or ip.is_global


def check_url(url: str, policy: DownloadPolicy) -> Target:
    """Refuse URLs whose scheme, host or resolved addresses the policy does not allow."""
    target = connect_target(url)
    if not _host_allowed(target.host, policy.allowed_hosts):
        raise DownloadError(
            f"refused {url}: host {target.host} is not in DOWNLOAD_ALLOWED_HOSTS "
            f"({', '.join(policy.allowed_hosts)}); add it there if it is trusted", permanent=True)
    try:
        infos = socket.getaddrinfo(target.host, target.port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise DownloadError(f"cannot resolve {target.host}: {exc}", permanent=False) from exc
    for info in infos:
        if not _address_allowed(str(info[4][0]), policy):
            raise DownloadError(
                f"refused {url}: {target.host} resolves to the non-public address {info[4][0]}", permanent=True)
    return target


def _session(policy: DownloadPolicy) -> requests.Session:
    """A session whose connections check the address they reached before sending a byte: DNS may
    answer differently between `check_url` and the connection."""

    class CheckedHTTPConnection(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            address = sock.getpeername()[0]
            if not _address_allowed(address, policy):
                sock.close()
                raise DownloadError(f"refused {self.host}: the connection went to the non-public address "
                                    f"{address}", permanent=True)
            return sock

    class CheckedHTTPSConnection(CheckedHTTPConnection, HTTPSConnection):
        pass

    adapter = HTTPAdapter(max_retries=0)
    adapter.poolmanager.pool_classes_by_scheme = {
        "http": type("CheckedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": CheckedHTTPConnection}),
        "https": type("CheckedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": CheckedHTTPSConnection}),
    }
    session = requests.Session()
    session.trust_env = False  # a proxy from the environment would connect instead of the checked host
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def fetch_pdf(url: str, policy: DownloadPolicy) -> bytes:
    """The PDF bytes at `url`, following up to 5 redirects, each re-checked against the policy."""
    deadline = time.monotonic() + policy.timeout_s
    session = _session(policy)
    for _ in range(_MAX_REDIRECTS + 1):
        check_url(url, policy)
        try:
            response = session.get(url, stream=True, allow_redirects=False, timeout=policy.timeout_s,
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
    # Compared as text first: a hostile header of thousands of digits must not reach int().
    if declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > policy.max_bytes):
        raise DownloadError(
            f"{url} declares {declared[:24]} bytes, over PDF_MAX_BYTES={policy.max_bytes:,}; raise the cap to accept it",
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

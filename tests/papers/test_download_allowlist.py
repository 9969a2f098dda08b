"""The download allowlist holds for the host the HTTP client really connects to, on every hop.

A loopback server holds a "secret"; each URL below reads as an allowed host to some parser but
would connect to the loopback server (or to an address outside the allowlist). Each must be refused
before any request reaches the server.
"""
from __future__ import annotations

import pytest

from papers.clients.download import DownloadError, DownloadPolicy, connect_target, fetch_pdf
from tests.papers.replay import ReplayServer


class SecretServer(ReplayServer):
    """Answers /secret with a PDF-looking secret and /hop with a redirect to `self.location`."""

    location = ""

    def answer(self, path: str, headers: dict):
        if path.startswith("/hop"):
            return 302, [("Location", self.location)], b""
        return 200, [("Content-Type", "application/pdf")], b"%PDF-1.7 secret"


@pytest.fixture
def server():
    with SecretServer() as srv:
        yield srv


def _policy(*hosts: str, loopback: bool = True) -> DownloadPolicy:
    return DownloadPolicy(allowed_hosts=list(hosts), max_bytes=1 << 20, timeout_s=5, allow_loopback=loopback)


def _refused(url: str, policy: DownloadPolicy, server: SecretServer) -> DownloadError:
    with pytest.raises(DownloadError) as caught:
        fetch_pdf(url, policy)
    assert caught.value.permanent, caught.value.reason
    assert "refused" in caught.value.reason
    assert server.requests == [], f"{url} reached the loopback server"
    return caught.value


def test_an_allowed_loopback_host_is_fetched(server):
    assert fetch_pdf(f"{server.url}/secret", _policy("127.0.0.1")) == b"%PDF-1.7 secret"


@pytest.mark.parametrize("template", [
    "http://127.0.0.1:{port}\\@arxiv.org/x.pdf",  # backslash: urlparse sees arxiv.org, urllib3 127.0.0.1
    "http://127.0.0.1:{port}\\\\@arxiv.org/x.pdf",
    "http://arxiv.org@127.0.0.1:{port}/secret",  # userinfo
    "http://arxiv.org:pw@127.0.0.1:{port}/secret",
    "http://arxiv.org%40@127.0.0.1:{port}/secret",
    "http://127.0.0.1:{port}%2F@arxiv.org/secret",  # percent-encoded "/" in userinfo
    "http://127.0.0.1:{port}%5C@arxiv.org/secret",
    "http://127%2E0%2E0%2E1:{port}/secret",  # percent-encoded host
    "http://127.0.0.1:{port} @arxiv.org/secret",
    "http://127.0.0.1:{port}\t@arxiv.org/secret",
    "http://127.0.0.1:{port}#@arxiv.org/secret",
    "http://127.0.0.1:{port}?@arxiv.org/secret",
])
def test_urls_that_read_as_an_allowed_host_but_connect_elsewhere_are_refused(template, server):
    _refused(template.format(port=server.server_address[1]), _policy("arxiv.org"), server)


@pytest.mark.parametrize("host", [
    "2130706433",  # decimal 127.0.0.1
    "0177.0.0.1",  # octal
    "0x7f.0.0.1",  # hex
    "127.1",  # short form
    "017700000001",
])
def test_non_canonical_ip_forms_are_refused_even_when_listed(host, server):
    error = _refused(f"http://{host}:{server.server_address[1]}/secret", _policy(host), server)
    assert "canonical" in error.reason


@pytest.mark.parametrize("host,listed", [
    ("[::1]", "::1"),
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),  # IPv4-mapped loopback
    ("[::ffff:7f00:1]", "::ffff:7f00:1"),
    ("[fe80::1%25eth0]", "fe80::1%eth0"),  # zone id
    ("169.254.169.254", "169.254.169.254"),  # link-local metadata address
])
def test_ipv6_and_private_addresses_are_refused_without_loopback_permission(host, listed, server):
    _refused(f"http://{host}:{server.server_address[1]}/secret", _policy(listed, loopback=False), server)


def test_connect_target_reads_the_host_urllib3_connects_to():
    target = connect_target("HTTPS://ArXiv.org./pdf/2309.06180")
    assert (target.scheme, target.host, target.port) == ("https", "arxiv.org.", 443)
    assert connect_target("http://[::1]:81/").host == "::1"


def test_every_redirect_is_checked_against_the_allowlist(server):
    port = server.server_address[1]
    with SecretServer() as other:
        server.location = f"http://localhost:{other.server_address[1]}/secret"
        with pytest.raises(DownloadError) as caught:
            fetch_pdf(f"http://127.0.0.1:{port}/hop", _policy("127.0.0.1"))
        assert "not in DOWNLOAD_ALLOWED_HOSTS" in caught.value.reason and caught.value.permanent
        server.location = f"http://127.0.0.1:{port}\\@arxiv.org/secret"
        with pytest.raises(DownloadError) as caught:
            fetch_pdf(f"http://127.0.0.1:{port}/hop", _policy("127.0.0.1", "arxiv.org"))
        assert "backslash" in caught.value.reason
        assert other.requests == []
        assert [r["path"] for r in server.requests] == ["/hop", "/hop"]

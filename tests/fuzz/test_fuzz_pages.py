"""Every browser page (each URL pattern outside /api/ and /admin/, found by walking the URL map, so
new pages are covered without listing them), with hostile path values and query parameters.
Property: an answer below 500, never a server error or a hang.
"""
from __future__ import annotations

import re
from urllib.parse import quote, urlencode

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tests.frontend.conftest import web  # noqa: F401  (fixture)
from tests.fuzz.conftest import time_limit, tried
from tests.fuzz.inputs import rng, values

pytestmark = pytest.mark.django_db
# Names pages read from the query string (and a few they do not), each given hostile values.
QUERY_NAMES = ["q", "page", "status", "category", "min_score", "ordering", "kind", "parameter", "subject",
               "type", "gpu", "gpu_count", "model", "cuda", "engine", "limit", "next", "topic", "sort", "x"]
PATH_VALUES = 6
QUERY_CASES = 10


def _page_patterns(resolver: URLResolver | None = None, prefix: str = "") -> list[str]:
    """Regex sources of every page URL (prefix included), without /api/ and /admin/."""
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        source = prefix + entry.pattern.regex.pattern.lstrip("^").replace("\\Z", "").rstrip("$")
        if source.startswith(("api/", "admin/")):
            continue
        if isinstance(entry, URLResolver):
            found += _page_patterns(entry, source)
        elif isinstance(entry, URLPattern):
            found.append(source)
    return found


def _url(source: str, value: str) -> str:
    filled = re.sub(r"\(\?P<[^>]+>(?:[^()]|\([^()]*\))*\)", quote(value.encode("utf-8", "surrogatepass"), safe="") or "x", source)
    return "/" + filled.replace("\\", "")


def test_no_page_answers_a_server_error_to_hostile_paths_or_query_parameters(web):  # noqa: F811
    clients = {"anonymous": Client(), "editor": Client()}
    clients["editor"].force_login(web.users["editor"])
    failures = []
    for source in _page_patterns():
        r = rng(f"page:{source}")
        pool = values(r, 50)
        urls = [_url(source, str(v)) for v in values(r, PATH_VALUES)] if "(?P<" in source else [_url(source, "")]
        urls += [_url(source, "2309.06180") + "?" + urlencode({name: str(r.choice(pool))
                                                              for name in r.sample(QUERY_NAMES, r.randint(1, 6))},
                                                             encoding="utf-8", errors="surrogatepass")
                 for _ in range(QUERY_CASES)]
        for url in urls:
            for who, client in clients.items():
                with time_limit(f"GET {url[:80]}"):
                    status = client.get(url).status_code
                tried(f"page /{source}")
                if status >= 500:
                    failures.append(f"GET {url[:160]} as {who} -> {status}")
    assert not failures, f"{len(failures)} server errors:\n" + "\n".join(failures[:40])

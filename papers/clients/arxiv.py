"""The arXiv API through the `arxiv` package, pointed at settings.ARXIV_API_URL.

Used by the crawl service (nightly beat task and `crawl_arxiv`). The package already spaces
requests by `delay_seconds` (arXiv asks for one request every three seconds) and retries
transient failures; this module adds what it lacks: a configurable endpoint, a little jitter,
and a clear error for a 4xx answer or a body that is not an Atom feed, instead of retrying those.
"""
from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import arxiv
import requests
from arxiv import _feed  # the package's own Atom parser: files and live answers parse the same way
from lxml import etree

ATOM_FEED = "{http://www.w3.org/2005/Atom}feed"
ATOM_NS = {"atom": "http://www.w3.org/2005/Atom"}


class ArxivError(Exception):
    """A permanent arXiv failure (bad query, not a feed); retrying the same request will not help."""


@dataclass
class Page:
    start: int
    results: list[arxiv.Result]


def check_atom(content: bytes, source: str) -> etree._Element:
    """The parsed feed root, or ArxivError saying why `content` is not an arXiv Atom feed."""
    try:
        root = etree.fromstring(content, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise ArxivError(f"{source} is not an Atom feed: not well-formed XML ({exc})") from exc
    if root is None or root.tag != ATOM_FEED:
        tag = getattr(root, "tag", "nothing")
        raise ArxivError(f"{source} is not an Atom feed: the root element is <{tag}>, expected <feed>")
    return root


def _api_error(root: etree._Element) -> str | None:
    """arXiv reports a bad request as an entry whose id is under /api/errors; its summary says why."""
    for entry in root.iterfind("atom:entry", ATOM_NS):
        if "/api/errors" in (entry.findtext("atom:id", "", ATOM_NS) or ""):
            return (entry.findtext("atom:summary", "", ATOM_NS) or "").strip() or "unknown error"
    return None


@dataclass
class AtomAnswer:
    """The entries of one API answer that could be read, and why each other entry could not."""

    results: list[arxiv.Result]
    unreadable: list[str]


def parse_atom(content: bytes, source: str) -> AtomAnswer:
    """Entries of one saved or received API answer, read one by one (a bad date in one entry costs
    that entry only); ArxivError for non-Atom bodies and API errors."""
    root = check_atom(content, source)
    error = _api_error(root)
    if error:
        raise ArxivError(f"arXiv rejected the request ({source}): {error}")
    answer = AtomAnswer([], [])
    for number, entry in enumerate(root.iterfind("atom:entry", ATOM_NS), start=1):
        entry_id = (entry.findtext("atom:id", "", ATOM_NS) or "").strip()[:80] or f"entry {number}"
        try:
            result = _feed._build_result(entry)
        except (ValueError, TypeError, OverflowError) as exc:  # the package's date and field parsing
            answer.unreadable.append(f"{source}: {entry_id} cannot be read ({exc}); skipped")
            continue
        if result is None:  # the package skips entries without an id, <published> or <updated>
            answer.unreadable.append(f"{source}: {entry_id} lacks its id or dates; skipped")
        else:
            answer.results.append(result)
    return answer


def _check_response(response: requests.Response, *args, **kwargs) -> None:
    """requests hook: 4xx and non-Atom bodies become ArxivError at once (no pointless retries)."""
    if 400 <= response.status_code < 500:
        reason = f"HTTP {response.status_code}"
        with contextlib.suppress(ArxivError):
            reason = f"{reason}: {_api_error(check_atom(response.content, response.url)) or 'no reason given'}"
        raise ArxivError(f"arXiv rejected the query ({reason}); fix the query. URL: {response.url}")
    if response.status_code == 200:
        check_atom(response.content, f"the answer from {response.url}")


def make_client(api_url: str, delay_s: float, page_size: int, retries: int = 3) -> arxiv.Client:
    """An `arxiv.Client` aimed at `api_url`, waiting `delay_s` (plus up to 10% jitter) between requests."""
    client = arxiv.Client(page_size=page_size, delay_seconds=delay_s * random.uniform(1.0, 1.1), num_retries=retries)
    client.query_url_format = api_url.rstrip("?") + "?{}"
    client._session.hooks["response"].append(_check_response)
    return client


def search_pages(client: arxiv.Client, query: str, max_results: int, ids: list[str] | None = None) -> Iterator[Page]:
    """Pages of a search (or of an id list), newest submissions first; fetched lazily, so stopping
    early saves requests."""
    search = arxiv.Search(
        query=query, id_list=ids or [], max_results=max_results,
        sort_by=arxiv.SortCriterion.SubmittedDate, sort_order=arxiv.SortOrder.Descending,
    )
    page: list[arxiv.Result] = []
    start = 0
    for result in client.results(search):
        page.append(result)
        if len(page) == client.page_size:
            yield Page(start, page)
            start += len(page)
            page = []
    if page:
        yield Page(start, page)


def read_atom_file(path: Path) -> AtomAnswer:
    """Results of a saved API answer: the raw Atom XML, or a recorded JSON {url, status_code, body}."""
    content = path.read_bytes()
    if path.suffix == ".json":
        try:
            record = json.loads(content)
            body, status = record["body"].encode(), int(record.get("status_code", 200))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ArxivError(f"{path} is JSON but not a recorded answer {{url, status_code, body}}") from exc
        if status != 200:
            parse_atom(body, str(path))  # raises with arXiv's own reason when it gave one
            raise ArxivError(f"{path} records HTTP {status}")
        content = body
    return parse_atom(content, str(path))

"""Every form the browser pages show (found by reading the pages' HTML, so a new form is covered
without listing it), posted with hostile values in each of its fields, by an editor and anonymously.
Property: an answer below 500, never a server error or a hang.
"""
from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import resolve

from tests.frontend.conftest import web  # noqa: F401  (fixture)
from tests.fuzz.conftest import time_limit, tried
from tests.fuzz.inputs import rng, values
from tests.fuzz.test_fuzz_pages import _page_patterns, _url

pytestmark = pytest.mark.django_db
CASES_PER_FORM = 8


class _Forms(HTMLParser):
    """The POST forms of one page: (action, {field name: input type})."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.page, self.forms, self._open = page, [], None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form" and (a.get("method") or "").lower() == "post":
            self._open = (a.get("action") or self.page, {})
        elif tag in ("input", "textarea", "select") and self._open is not None and a.get("name"):
            self._open[1][a["name"]] = (a.get("type") or tag).lower()

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._open is not None:
            self.forms.append(self._open)
            self._open = None


def _forms(client: Client, path_values: list[str]) -> dict[str, dict[str, str]]:
    """Every POST form on every page that answers 200 for one of `path_values`: one action per URL
    route and word in it (five facts' "reject" buttons are one form, "verify" another), with its fields."""
    found: dict[str, dict[str, str]] = {}
    routes: dict[tuple, str] = {}
    for source in _page_patterns():
        for value in (path_values if "(?P<" in source else [""]):
            url = _url(source, value)
            response = client.get(url)
            if response.status_code == 200 and "html" in response.get("Content-Type", ""):
                parser = _Forms(url)
                parser.feed(response.content.decode("utf-8", "replace"))
                for action, fields in parser.forms:
                    match = resolve(action.split("?")[0])
                    words = tuple(str(v) for v in match.kwargs.values() if not str(v).isdigit())  # verify, reject
                    action = routes.setdefault((match.route, *words), action)
                    found.setdefault(action, {}).update(fields)
    return found


def _post(client: Client, action: str, data: dict[str, str], files: list[str]) -> int:
    """Post as a browser would: urlencoded (its bytes may be invalid UTF-8, as a hostile client can
    send), or multipart with the file fields as uploads when the form takes a file."""
    if not files:
        body = urlencode(data, encoding="utf-8", errors="surrogatepass")
        return client.post(action, body, content_type="application/x-www-form-urlencoded").status_code
    fields = {k: v.encode("utf-8", "replace").decode("utf-8") for k, v in data.items()}
    for name in files:
        fields[name] = SimpleUploadedFile("x.pdf", data[name].encode("utf-8", "surrogatepass")[:50_000])
    return client.post(action, fields).status_code


def test_no_form_answers_a_server_error_to_hostile_values(web):  # noqa: F811
    editor, anonymous = Client(), Client()
    editor.force_login(web.users["editor"])
    fact = next(iter(web.facts.values()))
    forms = _forms(editor, ["2309.06180", str(fact.pk), "chunked_prefill"])
    assert {"/login/", "/digest/", "/setup/"} <= set(forms) and any(a.startswith("/facts/") for a in forms), forms
    failures = []
    for action, fields in sorted(forms.items()):
        r = rng(f"form:{action}")
        pool = values(r, 60)
        for _ in range(CASES_PER_FORM):
            data = {name: str(r.choice(pool)) for name in fields if name != "csrfmiddlewaretoken"}
            files = [name for name, kind in fields.items() if kind == "file"]
            for who, client in (("editor", editor), ("anonymous", anonymous)):
                if who == "editor":
                    client.force_login(web.users["editor"])  # a logout form may have signed the editor out
                with time_limit(f"POST {action[:80]}"):
                    status = _post(client, action, data, files)
                tried(f"form {action}")
                if status >= 500:
                    failures.append(f"POST {action} {sorted(data)} as {who} -> {status}")
    assert not failures, f"{len(failures)} server errors:\n" + "\n".join(failures[:40])

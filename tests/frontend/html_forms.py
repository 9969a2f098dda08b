"""Reading a page's form as a browser would submit it: every named input and textarea value.

The edit tests post what the page itself carries (hidden originals and the version included), so
they exercise the form a person really has in front of them, opened at a known moment.
"""
from __future__ import annotations

from html.parser import HTMLParser


class _FormReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[dict, dict[str, str]]] = []
        self._fields: dict[str, str] | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._fields = {}
            self.forms.append((attrs, self._fields))
        elif self._fields is None:
            return
        elif tag == "input" and attrs.get("name") and attrs.get("type") not in ("submit", "checkbox"):
            self._fields[attrs["name"]] = attrs.get("value") or ""
        elif tag == "textarea" and attrs.get("name"):
            self._textarea = attrs["name"]
            self._fields[self._textarea] = ""

    def handle_data(self, data):
        if self._textarea and self._fields is not None:
            self._fields[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "form":
            self._fields = None


def form_values(html: str, *, action: str = "", field: str | None = None) -> dict[str, str]:
    """The values the page's form posting to `action` ("" = the page itself) would submit; with
    `field`, the first such form that has that field."""
    reader = _FormReader()
    reader.feed(html)
    for attrs, fields in reader.forms:
        if (attrs.get("action") or "") == action and (field is None or field in fields):
            return {name: value.removeprefix("\n") for name, value in fields.items()}
    raise AssertionError(f"no form posting to {action!r}{f' with a {field!r} field' if field else ''} on the page")

"""Text as PostgreSQL can store it: the one cleaning function every stored text goes through.

PDF text layers carry characters PostgreSQL refuses: NUL (U+0000), which neither `text` nor
`jsonb` columns accept, and lone UTF-16 surrogates (broken ToUnicode maps), which cannot be
encoded as UTF-8 at all. Called by the PDF parser on every line and page it reads, and by the
papers app's model fields (papers.models.fields) on every value they save, so no path can store
text that makes the database raise. Django-free on purpose.
"""
from __future__ import annotations

import re
from typing import Any

_REFUSED = re.compile("[\x00\ud800-\udfff]")
_REPLACEMENT = {"\x00": ""}  # a NUL is no character at all; a lone surrogate becomes U+FFFD


def clean_text(text: str) -> str:
    """`text` without the characters PostgreSQL refuses (NUL dropped, lone surrogates -> U+FFFD)."""
    if not _REFUSED.search(text):
        return text
    return _REFUSED.sub(lambda match: _REPLACEMENT.get(match.group(), "\ufffd"), text)


def clean_value(value: Any) -> Any:
    """`clean_text` applied to every string inside a JSON-like value (dict keys included)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(key): clean_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(item) for item in value]
    return value

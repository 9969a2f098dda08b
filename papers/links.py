"""Finding code links and arXiv ids in free text (abstracts, comments, READMEs, PDF pages).

Pure functions, used by the crawl services when they link papers to repositories.
"""
from __future__ import annotations

import re

from papers.arxiv_ids import NEW_STYLE, OLD_STYLE

_GITHUB = re.compile(
    r"(?:https?://)?(?:www\.)?github\.com/\s?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})",
    re.IGNORECASE,
)
_ARXIV_ID = re.compile(rf"(?:arxiv\.org/(?:abs|pdf)/|arXiv:\s?)({NEW_STYLE}|{OLD_STYLE})(?:v\d+)?", re.IGNORECASE)
_NOT_REPOS = {"features", "about", "orgs", "topics", "sponsors", "marketplace", "settings", "login"}


def github_repos(text: str) -> list[str]:
    """`owner/name` of each GitHub repository linked in `text`, in order, without duplicates."""
    found: list[str] = []
    for owner, name in _GITHUB.findall(text or ""):
        name = re.sub(r"(\.git)?[.,;:)\]]*$", "", name)
        if not name or owner.lower() in _NOT_REPOS:
            continue
        full_name = f"{owner}/{name}"
        if full_name.lower() not in {f.lower() for f in found}:
            found.append(full_name)
    return found


def arxiv_ids(text: str) -> list[str]:
    """arXiv ids (without version) that `text` links or cites as arXiv:ID."""
    ids: list[str] = []
    for arxiv_id in _ARXIV_ID.findall(text or ""):
        if arxiv_id not in ids:
            ids.append(arxiv_id)
    return ids


"""What the scoring rules look at, as plain frozen dataclasses (no Django).

Built by papers.scoring.selectors.scoring_input from the database, or by tests from the corpus.
`fingerprint_data()` is the canonical form hashed to decide whether a paper needs a new Score row.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime


@dataclass(frozen=True)
class TextPart:
    """A piece of the paper's own text: the abstract or one section."""

    where: str  # "abstract" or "§5.1 Evaluation"
    text: str
    page: int | None = None

    @property
    def label(self) -> str:
        return f"{self.where} p.{self.page}" if self.page else self.where


@dataclass(frozen=True)
class RepoInput:
    """A code repository linked to the paper, with the health signals GitHub reports."""

    full_name: str
    html_url: str = ""
    official: bool = True
    stars: int | None = None
    forks: int | None = None
    open_issues: int | None = None
    pushed_at: datetime | None = None
    license_spdx: str = ""
    archived: bool = False
    has_ci: bool | None = None
    workflows: tuple[str, ...] = ()
    issues: tuple[dict, ...] = ()  # issue-like dicts: title, body, html_url (production_signals)

    @property
    def url(self) -> str:
        return self.html_url or f"https://github.com/{self.full_name}"


@dataclass(frozen=True)
class FactInput:
    """A parameter fact the ontology extracted: a knob and the value the paper uses."""

    parameter: str
    value: str
    unit: str = ""
    subject: str = ""
    page: int | None = None
    quote: str = ""


@dataclass(frozen=True)
class ScoringInput:
    arxiv_id: str
    title: str
    published: datetime | None = None
    code_urls: tuple[str, ...] = ()
    repos: tuple[RepoInput, ...] = ()
    texts: tuple[TextPart, ...] = ()
    facts: tuple[FactInput, ...] = ()
    facts_extracted: bool = False  # False: extraction has not run, so "no facts" means "unknown"

    def fingerprint_data(self) -> dict:
        data = asdict(self)
        data["repos"] = sorted(data["repos"], key=lambda repo: repo["full_name"])
        data["facts"] = sorted(data["facts"], key=lambda fact: (fact["parameter"], fact["value"], fact["quote"]))
        return data

"""Reads everything the scoring rules need about one paper into a ScoringInput.

Called by papers.scoring.services.score_paper. Parameter facts come from the ontology app's
`ontology.selectors.parameter_facts(paper_id)` (the only cross-app read), unless the caller
passes them in (tests, or a caller that already holds them).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from papers.models import Paper, PaperRepo
from papers.scoring.inputs import FactInput, RepoInput, ScoringInput, TextPart


def fact_field(obj: Any, name: str, default: Any = None) -> Any:
    """A fact's attribute whether the ontology hands back model instances or dicts."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def fact_input(fact: Any) -> FactInput:
    value = fact_field(fact, "value")
    page = fact_field(fact, "page")
    return FactInput(
        parameter=str(fact_field(fact, "parameter", "") or ""),
        value="" if value is None else str(value),
        unit=str(fact_field(fact, "unit", "") or ""),
        subject=str(fact_field(fact, "subject", "") or ""),
        page=int(page) if page else None,
        quote=str(fact_field(fact, "quote", "") or ""),
    )


def ontology_parameter_facts(paper_id: int) -> list[Any] | None:
    """The ontology's parameter facts of a paper, or None while the ontology app has no such selector."""
    # Imported late: papers may read the ontology's selectors only, and the app may not be migrated yet.
    try:
        from ontology.selectors import parameter_facts
    except ImportError:
        return None
    return list(parameter_facts(paper_id))


def _workflow_name(workflow: Any) -> str:
    if isinstance(workflow, dict):
        return str(workflow.get("name") or workflow.get("path") or "")
    return str(workflow)


def _issue(signal: Any) -> dict:
    return signal if isinstance(signal, dict) else {"title": str(signal)}


def repo_inputs(paper: Paper) -> tuple[RepoInput, ...]:
    links = PaperRepo.objects.filter(paper=paper).select_related("repo").order_by("repo__full_name")
    return tuple(
        RepoInput(
            full_name=link.repo.full_name, html_url=link.repo.html_url, official=link.official,
            stars=link.repo.stars, forks=link.repo.forks, open_issues=link.repo.open_issues,
            pushed_at=link.repo.pushed_at, license_spdx=link.repo.license_spdx, archived=link.repo.archived,
            has_ci=link.repo.has_ci, workflows=tuple(_workflow_name(w) for w in link.repo.workflows or []),
            issues=tuple(_issue(s) for s in link.repo.production_signals or []),
        )
        for link in links
    )


def text_parts_of(abstract: str, sections: Iterable[Any]) -> tuple[TextPart, ...]:
    """The abstract and each section (anything with number, title, text, page_start) as TextParts;
    shared by stored papers and the knowledge-pack builder, which scores a parse before storing it."""
    parts = [TextPart("abstract", abstract, 1)] if abstract else []
    for section in sections:
        where = f"§{section.number} {section.title}".strip() if section.number else section.title
        parts.append(TextPart(where, section.text, section.page_start))
    return tuple(parts)


def text_parts(paper: Paper) -> tuple[TextPart, ...]:
    return text_parts_of(paper.abstract, paper.sections.order_by("order"))


def scoring_input(paper: Paper, facts: Iterable[Any] | None = None) -> ScoringInput:
    """Everything the rules read about `paper`; `facts` overrides the ontology lookup."""
    found = list(facts) if facts is not None else ontology_parameter_facts(paper.id)
    return ScoringInput(
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        published=paper.published,
        code_urls=tuple(paper.code_urls or ()),
        repos=repo_inputs(paper),
        texts=text_parts(paper),
        facts=tuple(fact_input(f) for f in found or ()),
        facts_extracted=bool(found) or paper.status == Paper.Status.EXTRACTED,
    )

"""Reads of the ontology (services write, selectors read): for the UI, the API, scoring and the advisor.

Contract (notes): `hybrid_search(query, limit=10, types=...)`, `evidence_for(...)`, `facts_for_paper(paper_id)`,
`parameter_facts(paper_id)` — owned by helper "ontology".
The block marked "web" at the end is owned by helper "web" (page and API reads); add other reads above it.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, QuerySet

from ontology.models import Entity, ExtractionRun, Fact, FactRevision

# ---------------------------------------------------------------------------------------------
# web: reads for the browser pages and the REST API (helper "web"). Each list is one query (plus
# at most one prefetch), so list pages and endpoints keep a fixed query count.
# ---------------------------------------------------------------------------------------------


def fact_rows(*, kind: str | None = None, parameter: str | None = None, subject: str | None = None,
              paper: str | None = None, status: str | None = None, entity: str | None = None) -> QuerySet[Fact]:
    """Facts filtered as the API and pages ask (paper = arXiv id, subject case-insensitive)."""
    facts = Fact.objects.select_related("paper", "entity")
    if kind:
        facts = facts.filter(kind=kind)
    if parameter:
        facts = facts.filter(parameter=parameter)
    if subject:
        facts = facts.filter(subject__iexact=subject)
    if paper:
        facts = facts.filter(paper__arxiv_id=paper)
    if status:
        facts = facts.filter(status=status)
    if entity:
        facts = facts.filter(entity__key=entity)
    return facts.order_by("paper__arxiv_id", "page", "id")


def paper_fact_rows(paper_id: int) -> list[Fact]:
    """A paper's facts in page order, rejected ones last, for its page."""
    return list(Fact.objects.filter(paper_id=paper_id).select_related("paper", "entity")
                .order_by("status", "page", "id"))


def review_queue(status: str = "extracted") -> QuerySet[Fact]:
    """Facts with `status`, least confident first: the ones most worth a person's look."""
    return Fact.objects.filter(status=status).select_related("paper", "entity").order_by("confidence", "id")


def _changed(revision: FactRevision) -> list[tuple[str, Any, Any]]:
    before, after = revision.before or {}, revision.after or {}
    return [(k, before.get(k), after.get(k)) for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]


def fact_with_history(fact_id: int) -> Fact | None:
    """One fact with `history`: its revisions, oldest first, each with `changed` = [(field, before, after)]."""
    fact = Fact.objects.select_related("paper", "entity").filter(id=fact_id).first()
    if fact is None:
        return None
    fact.history = list(FactRevision.objects.filter(fact=fact).order_by("created_at", "id"))
    for revision in fact.history:
        revision.changed = _changed(revision)
    return fact


def running_extractions(limit: int = 10) -> list[ExtractionRun]:
    """Extraction jobs still running, oldest first (the dashboard shows their progress)."""
    return list(ExtractionRun.objects.filter(status=ExtractionRun.Status.RUNNING).select_related("paper")
                .order_by("started_at")[:limit])


def parameter_index() -> list[dict[str, Any]]:
    """Every parameter with a non-rejected fact: {parameter, facts, papers}, by name."""
    return list(Fact.objects.exclude(status=Fact.Status.REJECTED).values("parameter")
                .annotate(facts=Count("id"), papers=Count("paper", distinct=True)).order_by("parameter"))


def _value_key(fact: Fact) -> Any:
    return round(fact.value_num, 6) if fact.value_num is not None else fact.value.strip().lower()


def parameter_values(name: str) -> list[dict[str, Any]]:
    """Every non-rejected value of parameter `name` across papers: [{fact, conflict}].

    A value conflicts when another paper states a different value for the same subject and unit.
    """
    facts = list(Fact.objects.filter(parameter=name).exclude(status=Fact.Status.REJECTED)
                 .select_related("paper").order_by("subject", "paper__arxiv_id", "page", "id"))
    groups: dict[tuple[str, str], dict[Any, set[int]]] = defaultdict(lambda: defaultdict(set))
    for fact in facts:
        groups[(fact.subject.lower(), fact.unit)][_value_key(fact)].add(fact.paper_id)
    return [
        {"fact": fact, "conflict": len(groups[(fact.subject.lower(), fact.unit)]) > 1
         and len(set().union(*groups[(fact.subject.lower(), fact.unit)].values())) > 1}
        for fact in facts
    ]


def entity_rows() -> QuerySet[Entity]:
    """All entities by name."""
    return Entity.objects.order_by("name", "key")


def entity_page(key: str) -> Entity | None:
    """An entity with `page_facts`: its non-rejected facts across papers."""
    entity = Entity.objects.filter(key=key).first()
    if entity is None:
        return None
    entity.page_facts = list(entity.facts.exclude(status=Fact.Status.REJECTED).select_related("paper", "entity")
                             .order_by("parameter", "paper__arxiv_id", "page"))
    return entity

"""Wiki pages: an entity (/entities/<key>/) and a parameter (/parameters/<name>/) with every value
the papers report, disagreeing values highlighted; /parameters/ lists all parameters.

Conflicts come from ontology.selectors (same subject, parameter and condition, different values).
"""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from ontology import selectors as ontology_selectors


def conflicting_fact_ids(conflicts: list[dict[str, Any]]) -> set[int]:
    """Ids of every fact that takes part in a conflict."""
    return {value["fact_id"] for conflict in conflicts for value in conflict["values"]}


def parameter_index(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/parameter_index.html",
                  {"parameters": ontology_selectors.parameter_index()})


def parameter_page(request: HttpRequest, name: str) -> HttpResponse:
    wiki = ontology_selectors.parameter_wiki(name)
    if not wiki["facts"]:
        raise Http404(f"No paper reports the parameter {name!r}")
    in_conflict = conflicting_fact_ids(wiki["conflicts"])
    rows = [{"fact": fact, "conflict": fact.pk in in_conflict} for fact in wiki["facts"]]
    return render(request, "frontend/parameter_detail.html", {
        "name": wiki["parameter"], "spec": wiki["spec"], "rows": rows, "conflicts": wiki["conflicts"],
    })


def entity_page(request: HttpRequest, key: str) -> HttpResponse:
    wiki = ontology_selectors.entity_wiki(key)
    if wiki is None:
        raise Http404(f"No entity {key!r}")
    return render(request, "frontend/entity_detail.html", {
        "entity": wiki["entity"], "facts_by_parameter": wiki["facts_by_parameter"], "conflicts": wiki["conflicts"],
        "in_conflict": conflicting_fact_ids(wiki["conflicts"]), "papers": wiki["papers"],
    })

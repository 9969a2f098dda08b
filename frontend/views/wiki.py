"""Wiki pages: an entity (/entities/<key>/) and a parameter (/parameters/<name>/) with every value
the papers report, disagreeing values highlighted; /parameters/ lists all parameters."""
from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from ontology import selectors as ontology_selectors


def parameter_index(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/parameter_index.html",
                  {"parameters": ontology_selectors.parameter_index()})


def parameter_page(request: HttpRequest, name: str) -> HttpResponse:
    rows = ontology_selectors.parameter_values(name)
    if not rows:
        raise Http404(f"No paper reports the parameter {name!r}")
    return render(request, "frontend/parameter_detail.html", {
        "name": name, "rows": rows, "conflicts": sum(1 for r in rows if r["conflict"]),
    })


def entity_page(request: HttpRequest, key: str) -> HttpResponse:
    entity = ontology_selectors.entity_page(key)
    if entity is None:
        raise Http404(f"No entity {key!r}")
    return render(request, "frontend/entity_detail.html", {"entity": entity, "facts": entity.page_facts})

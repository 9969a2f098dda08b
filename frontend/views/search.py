"""Hybrid search (/search/?q=): facts, page passages, sections and papers ranked by ontology.selectors.hybrid_search."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ontology import selectors as ontology_selectors

MAX_QUERY = 300


def search(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()[:MAX_QUERY]
    kind = request.GET.get("type", "")
    types = (kind,) if kind in ontology_selectors.DOC_TYPES else ontology_selectors.DOC_TYPES
    results = ontology_selectors.hybrid_search(q, limit=20, types=types) if q else []
    return render(request, "frontend/search.html", {"q": q, "type": kind, "results": results})

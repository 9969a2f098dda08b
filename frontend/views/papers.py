"""Paper pages: the list (/papers/, filters and pagination) and one paper (/papers/<arXiv id>/):
scorecard with evidence, facts with quotes and page links, repository health, sections."""
from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from infrawiki.permissions import is_editor
from ontology import selectors as ontology_selectors
from papers import selectors as paper_selectors

PAGE_SIZE = 25
# The scorecard's sub-scores in display order: (Score field, label, maximum points).
SUBSCORES = (("code_availability", "Code availability", 3), ("experimental_realism", "Experimental realism", 3),
             ("parameter_transparency", "Parameter transparency", 2), ("community_feedback", "Community feedback", 2))


def scorecard_rows(score) -> list[tuple[str, float, int, list]]:
    """(label, points, max, evidence items) per sub-score; evidence comes from Score.evidence."""
    if score is None:
        return []
    evidence = score.evidence or {}
    return [(label, getattr(score, field), top, evidence.get(field, [])) for field, label, top in SUBSCORES]


def paper_list(request: HttpRequest) -> HttpResponse:
    q = request.GET.get("q", "").strip()
    status = request.GET.get("status", "").strip()
    papers = paper_selectors.paper_rows(search=q or None, status=status or None)
    page = Paginator(papers, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "frontend/paper_list.html", {
        "page": page, "q": q, "status": status, "statuses": paper_selectors.PAPER_STATUSES,
    })


def paper_page(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = paper_selectors.paper_page(arxiv_id)
    if paper is None:
        raise Http404(f"No paper with arXiv id {arxiv_id}")
    facts = list(ontology_selectors.facts_for_paper(paper.id).select_related("entity"))
    return render(request, "frontend/paper_detail.html", {
        "paper": paper,
        "score": paper.latest_score,
        "score_rows": scorecard_rows(paper.latest_score),
        "facts": facts,
        "can_review": is_editor(request.user),
    })

"""Paper pages: the list (/papers/, filters and pagination) and one paper (/papers/<arXiv id>/):
scorecard with evidence, facts with quotes and page links, repository health, sections."""
from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from advisor.selectors import applicability
from frontend.views.setup import SESSION_KEY, SetupForm, saved_setup
from infrawiki.permissions import is_editor
from ontology import selectors as ontology_selectors
from papers import selectors as paper_selectors

PAGE_SIZE = 25
# The scorecard's sub-scores in display order: (Score field, label, maximum points).
SUBSCORES = tuple((field, field.replace("_", " ").capitalize(), top)
                  for field, top in paper_selectors.subscore_maxima().items())


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


def _applies(paper, setup: dict) -> dict:
    repos = [{"name": r.full_name, "url": r.html_url, "stars": r.stars, "pushed_at": r.pushed_at, "ci": r.has_ci,
              "license": r.license_spdx, "archived": r.archived} for r in paper.repo_list]
    return applicability(setup, paper.environment or {}, ontology_selectors.paper_model_sizes(paper.id),
                         ontology_selectors.paper_techniques(paper.id), repos)


def paper_page(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = paper_selectors.paper_page(arxiv_id)
    if paper is None:
        raise Http404(f"No paper with arXiv id {arxiv_id}")
    facts = list(ontology_selectors.facts_for_paper(paper.id).select_related("entity"))
    setup = saved_setup(request)
    errors = request.session.pop(f"{SESSION_KEY}_errors", None)
    return render(request, "frontend/paper_detail.html", {
        "setup": setup, "setup_form": SetupForm(initial=setup or {}), "setup_errors": errors,
        "applies": _applies(paper, setup) if setup else None,
        "paper": paper,
        "score": paper.latest_score,
        "score_rows": scorecard_rows(paper.latest_score),
        "facts": facts,
        "superseded": list(ontology_selectors.superseded_facts(paper.id)),
        "can_review": is_editor(request.user),
    })

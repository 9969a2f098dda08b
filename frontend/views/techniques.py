"""Technique pages: diagnose (/diagnose/, a POST form; ?q= for shared links), the technique index (/techniques/) and one technique
(/techniques/<name>/) with the papers and facts linked to it and the engine flags that switch it on;
editors set which techniques a fact is about from the fact's page (a revision, like any edit)."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from advisor.selectors import MAX_QUERY_CHARS, DiagnoseInputError, diagnose, technique_flags
from infrawiki.permissions import is_editor
from ontology import selectors as ontology_selectors
from ontology import services as ontology_services
from ontology.services import FactValidationError


@require_http_methods(["GET", "POST"])
def diagnose_page(request: HttpRequest) -> HttpResponse:
    """The form posts (a pasted error message of up to MAX_QUERY_CHARS would not fit in a URL);
    a GET with ?q= still answers, for short links people share."""
    q = (request.POST if request.method == "POST" else request.GET).get("q", "").strip()
    result, error = None, None
    if q:
        try:
            result = diagnose(q)
        except DiagnoseInputError as exc:
            error = exc.as_dict()
    return render(request, "frontend/diagnose.html", {"q": q, "result": result, "error": error,
                                                      "max_chars": MAX_QUERY_CHARS})


def technique_index(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/technique_index.html", {"techniques": ontology_selectors.technique_index()})


def technique_page(request: HttpRequest, name: str) -> HttpResponse:
    wiki = ontology_selectors.technique_wiki(name)
    if wiki is None:
        raise Http404(f"No technique {name!r}")
    return render(request, "frontend/technique_detail.html", {**wiki, "flags": technique_flags(name)})


@require_POST
def fact_techniques(request: HttpRequest, fact_id: int) -> HttpResponse:
    """An editor sets the techniques of one fact (checkboxes on the fact page)."""
    if not is_editor(request.user):
        raise PermissionDenied("Only editors can change a fact's techniques.")
    fact = ontology_selectors.fact_with_history(fact_id)
    if fact is None:
        raise Http404(f"No fact #{fact_id}")
    try:
        ontology_services.set_fact_techniques(fact, request.user, request.POST.getlist("technique"),
                                              note=request.POST.get("note", "")[:500])
    except FactValidationError as exc:
        messages.error(request, "; ".join(message for _, message in exc.errors))
    else:
        messages.success(request, f"Techniques of fact #{fact.id} saved; the change is in its history.")
    return redirect("frontend:fact", fact_id=fact_id)

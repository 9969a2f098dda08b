"""The review queue (/review/): editors verify, reject or edit extracted facts; every change is a
revision (ontology.services), shown on the fact's page with who, when and before → after."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from frontend.forms import FactEditForm, FactReviewForm
from frontend.views.next_url import next_url
from infrawiki.permissions import is_editor
from ontology import selectors as ontology_selectors
from ontology import services as ontology_services
from ontology.selectors import techniques
from ontology.services import FactValidationError, StaleFact
from papers import selectors as paper_selectors
from papers.services import AcceptRefused, accept_held_pdf, queue_extraction

PAGE_SIZE = 20


def review_queue(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "extracted")
    facts = ontology_selectors.review_queue(status=status)
    page = Paginator(facts, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "frontend/review_queue.html", {
        "page": page, "status": status, "can_review": is_editor(request.user),
        "identity_conflicts": paper_selectors.open_identity_conflicts(),
    })


def fact_page(request: HttpRequest, fact_id: int) -> HttpResponse:
    fact = ontology_selectors.fact_with_history(fact_id)
    if fact is None:
        raise Http404(f"No fact #{fact_id}")
    can_review = is_editor(request.user)
    form, status = None, 200
    if request.method == "POST":
        if not can_review:
            raise PermissionDenied("Only editors can edit facts.")
        form = FactEditForm(request.POST)
        if form.is_valid():
            try:
                saved = _save_edit(request, fact, form)
            except StaleFact as exc:
                form, status = _stale_form(form, exc.current), 409
                fact = ontology_selectors.fact_with_history(fact_id) or fact
            else:
                if saved is not None:
                    return saved
    elif can_review:
        form = FactEditForm.opened_on(fact)
    linked = set(ontology_services.fact_technique_names(fact))
    choices = [{"name": name, "title": spec.title, "checked": name in linked} for name, spec in techniques().items()]
    return render(request, "frontend/fact_detail.html", {"fact": fact, "form": form, "can_review": can_review,
                                                         "technique_choices": choices}, status=status)


def _save_edit(request: HttpRequest, fact, form: FactEditForm) -> HttpResponse | None:
    """Write the fields the person changed onto the version they opened; None (errors on the form)
    when the result breaks the fact's template. Raises StaleFact when the fact moved on meanwhile."""
    changes = form.changes()
    if not changes:
        messages.info(request, f"Nothing to save: no field of fact #{fact.id} was changed.")
        return redirect("frontend:fact", fact_id=fact.id)
    try:
        ontology_services.edit_fact(fact, user=request.user, changes=changes, note=form.cleaned_data["note"],
                                    expected_version=form.cleaned_data["version"])
    except FactValidationError as exc:
        for field, message in exc.errors:
            form.add_error(field if field in form.fields else None, message)
        return None
    messages.success(request, f"Fact #{fact.id} saved; the change is in its history.")
    return redirect("frontend:fact", fact_id=fact.id)


def _stale_form(form: FactEditForm, current) -> FactEditForm:
    """The person's form again, now checked against `current`, saying what changed since they opened it."""
    opened = {name: form.fields[name].to_python(form.data.get(form.add_initial_prefix(name)))
              for name in FactEditForm.FACT_FIELDS}
    moved = [f"{name} is now “{getattr(current, name) if getattr(current, name) not in (None, '') else '—'}”"
             for name in FactEditForm.FACT_FIELDS if (getattr(current, name) or None) != (opened[name] or None)]
    again = form.reopened_on(current)
    again.add_error(None, "Not saved: someone changed this fact after you opened this page"
                          + (f" ({'; '.join(moved)})" if moved else " (its review status)")
                          + ". Your values are still in the form; check them against the fact as it is now "
                            "and save again.")
    return again


def _back(request: HttpRequest, fallback: str) -> HttpResponse:
    """Back to the posted `next` page, else to the view named `fallback`."""
    return HttpResponseRedirect(next_url(request, reverse(fallback)))


@require_POST
def review_fact(request: HttpRequest, fact_id: str, action: str) -> HttpResponse:
    """Verify or reject one fact (POST from the queue, the paper page or the fact page)."""
    if not is_editor(request.user):
        raise PermissionDenied("Only editors can review facts.")
    fact = ontology_selectors.fact_with_history(int(fact_id))
    if fact is None:
        raise Http404(f"No fact #{fact_id}")
    done = "verified" if action == "verify" else "rejected"
    form = FactReviewForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        messages.error(request, f"Not {done}: {problems} Here is the fact as it is now; review it again.")
        return redirect("frontend:fact", fact_id=fact.id)
    note, expected = form.cleaned_data["note"], form.cleaned_data["version"]
    try:
        if action == "verify":
            ontology_services.verify_fact(fact, user=request.user, note=note, expected_version=expected)
            messages.success(request, f"Fact #{fact.id} verified.")
        else:
            ontology_services.reject_fact(fact, user=request.user, note=note, expected_version=expected)
            messages.success(request, f"Fact #{fact.id} rejected.")
    except StaleFact:
        messages.error(request, f"Not {done}: fact #{fact.id} changed after your page was loaded. "
                                "Here it is as it is now; review it again.")
        return redirect("frontend:fact", fact_id=fact.id)
    return _back(request, "frontend:review")


@login_required
@require_POST
def accept_identity(request: HttpRequest, conflict_id: int) -> HttpResponse:
    """An editor accepts a held PDF as the paper it claimed (papers.services.identity.accept_held_pdf):
    that paper's reading is replaced by the held one and its extraction is queued again."""
    if not is_editor(request.user):
        raise PermissionDenied("Only editors can decide identity conflicts.")
    try:
        paper = accept_held_pdf(conflict_id, request.user.get_username())
    except AcceptRefused as exc:
        messages.error(request, f"Not accepted: {exc.reason}.")
        return _back(request, "frontend:review")
    queued = queue_extraction(paper.pk)
    messages.success(request, f"The held PDF is now the reading of arXiv:{paper.arxiv_id}." + (
        " Its facts are being extracted again." if queued else
        f" Extraction could not be queued (is the worker running?); run `manage.py extract_papers {paper.arxiv_id}`."))
    return redirect("frontend:paper", arxiv_id=paper.arxiv_id)

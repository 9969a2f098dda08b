"""The advisor (/advisor/): a form for GPU, model, engine, workload and SLA; /advisor/result/ shows
the recommendation with a copyable command, a memory chart, predicted latencies, rejected options
and evidence.

The form posts, because a pasted config.json does not fit in a URL (half the model configs the
aiconfigurator bundle ships are longer, URL-encoded, than gunicorn's 4,094-byte request line). A post
without a pasted config is redirected to the same result as a GET, so ordinary results can still be
bookmarked and shared; /advisor/?<inputs> reopens the form filled in."""
from __future__ import annotations

import re

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse

from advisor import selectors as advisor_selectors
from advisor import services as advisor_services
from advisor.services import AdvisorInputError
from frontend.charts import latency_groups, memory_segments
from frontend.forms import AdvisorForm


def _in_form_words(text: str, form: AdvisorForm) -> str:
    """The advisor's errors name request keys as the API takes them ("model_config"); on the page a
    person sees field labels, so each quoted key becomes the label of its field."""
    for name, field in form.fields.items():
        label = str(field.label or name).split(" (")[0]
        text = re.sub(rf'\b(?:as|in) "{re.escape(name)}"', f"in the “{label}” field", text)
        text = text.replace(f'"{name}"', f"the “{label}” field")
    return text


def _shareable(data: QueryDict) -> str:
    """The inputs as a query string, less the pasted config (too long for a URL) and the CSRF token."""
    kept = data.copy()
    for name in ("model_config", "csrfmiddlewaretoken"):
        kept.pop(name, None)
    return kept.urlencode()


def advisor_form(request: HttpRequest) -> HttpResponse:
    """Empty, or filled in from ?<inputs> ("Change the inputs" on a result comes back here)."""
    return render(request, "frontend/advisor_form.html", {"form": AdvisorForm(initial=request.GET.dict())})


def advisor_result(request: HttpRequest) -> HttpResponse:
    data = request.POST if request.method == "POST" else request.GET
    form = AdvisorForm(data)
    if not form.is_valid():
        return render(request, "frontend/advisor_form.html", {"form": form}, status=400)
    if request.method == "POST" and not form.cleaned_data.get("model_config"):
        return redirect(f"{reverse('frontend:advisor-result')}?{_shareable(data)}", permanent=False)
    try:
        result = advisor_services.recommend(form.advisor_request())
    except AdvisorInputError as exc:
        text = f"{exc.error} — {exc.hint}" if getattr(exc, "hint", None) else str(exc.error)
        form.add_error(None, _in_form_words(text, form))
        return render(request, "frontend/advisor_form.html", {"form": form}, status=400)
    gpu = advisor_selectors.gpus().get((result.get("input") or {}).get("gpu_id", ""))
    gpu_gib = gpu.memory_gib if gpu else None
    for rec in result.get("recommendations", []):
        estimates = rec.get("estimates") or {}
        rec["memory_chart"] = memory_segments(estimates, gpu_gib)
        rec["latency_chart"] = latency_groups(estimates)
    return render(request, "frontend/advisor_result.html", {
        "form": form, "result": result, "gpu_gib": gpu_gib, "inputs_query": _shareable(data),
        "from_pasted_config": bool(form.cleaned_data.get("model_config"))})

"""The advisor (/advisor/): a form for GPU, model, engine, workload and SLA; /advisor/result/ shows
the recommendation with a copyable command, a memory chart, predicted latencies, rejected options
and evidence. Both are GET so a result can be bookmarked and shared."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from advisor import catalog as advisor_catalog
from advisor import services as advisor_services
from advisor.validation import AdvisorInputError
from frontend.charts import latency_groups, memory_segments
from frontend.forms import AdvisorForm


def advisor_form(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/advisor_form.html", {"form": AdvisorForm()})


def advisor_result(request: HttpRequest) -> HttpResponse:
    form = AdvisorForm(request.GET)
    if not form.is_valid():
        return render(request, "frontend/advisor_form.html", {"form": form}, status=400)
    try:
        result = advisor_services.recommend(form.advisor_request())
    except AdvisorInputError as exc:
        form.add_error(None, f"{exc.error} — {exc.hint}" if getattr(exc, "hint", None) else str(exc.error))
        return render(request, "frontend/advisor_form.html", {"form": form}, status=400)
    gpu = advisor_catalog.gpus().get((result.get("input") or {}).get("gpu_id", ""))
    gpu_gib = gpu.memory_gib if gpu else None
    for rec in result.get("recommendations", []):
        estimates = rec.get("estimates") or {}
        rec["memory_chart"] = memory_segments(estimates, gpu_gib)
        rec["latency_chart"] = latency_groups(estimates)
    return render(request, "frontend/advisor_result.html", {"form": form, "result": result, "gpu_gib": gpu_gib})

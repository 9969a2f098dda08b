"""The dashboard (/): new this week, top scored, the value matrix, pipeline status with the progress of running jobs.

`pipeline_fragment` serves the pipeline panel alone, so the page can refresh it every few seconds
(site.js) without reloading the rest.
"""
from __future__ import annotations

from datetime import timedelta

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from frontend.charts import value_matrix_chart
from ontology import selectors as ontology_selectors
from papers import selectors as paper_selectors
from papers.selectors import HIGH_COST, HIGH_VALUE


def _pipeline_context() -> dict:
    pipeline = paper_selectors.pipeline_status()
    return {
        "pipeline": pipeline,
        "network": paper_selectors.network_status(pipeline["waiting_for_pdf"]),
        "fact_count": ontology_selectors.live_facts().count(),
        "running": ontology_selectors.running_extractions(limit=10),
    }


def dashboard(request: HttpRequest) -> HttpResponse:
    since = timezone.now() - timedelta(days=7)
    context = {
        "new_papers": paper_selectors.papers_new_since(since, limit=20),
        "top_scored": paper_selectors.top_scored_papers(limit=10),
        "since": since,
        "matrix": value_matrix_chart(list(paper_selectors.latest_scores()), HIGH_VALUE, HIGH_COST),
        **_pipeline_context(),
    }
    return render(request, "frontend/dashboard.html", context)


def pipeline_fragment(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/_pipeline.html", _pipeline_context())

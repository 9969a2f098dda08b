"""The dashboard (/): what has been read (techniques with their paper counts, the newest read papers),
new this week, top scored, the value matrix, pipeline status with the progress of running jobs.

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


def _read_by_topic() -> list[dict]:
    """Techniques that read papers' facts are linked to, most papers first (the first page's "what is there")."""
    rows = [row for row in ontology_selectors.technique_index() if row["papers"]]
    return sorted(rows, key=lambda row: (-row["papers"], row["name"]))


def dashboard(request: HttpRequest) -> HttpResponse:
    since = timezone.now() - timedelta(days=7)
    context = {
        "read_by_topic": _read_by_topic(),
        "newest_read": paper_selectors.newest_read_papers(limit=8),
        "new_papers": paper_selectors.papers_new_since(since, limit=20),
        "top_scored": paper_selectors.top_scored_papers(limit=10),
        "since": since,
        "matrix": value_matrix_chart(list(paper_selectors.latest_scores()), HIGH_VALUE, HIGH_COST),
        **_pipeline_context(),
    }
    return render(request, "frontend/dashboard.html", context)


def pipeline_fragment(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/_pipeline.html", _pipeline_context())

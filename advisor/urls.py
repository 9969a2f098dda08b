"""Advisor API routes, included by infrawiki/api_urls.py under /api/advisor/."""
from django.urls import path

from advisor.api import RecommendView

urlpatterns = [
    path("recommend", RecommendView.as_view(), name="advisor-recommend"),
]

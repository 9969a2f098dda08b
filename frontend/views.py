"""Page views: thin, reading through the apps' selectors."""
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from papers.models import Paper


def paper_list(request: HttpRequest) -> HttpResponse:
    papers = Paper.objects.order_by("-published")[:200]
    return render(request, "frontend/paper_list.html", {"papers": papers})

"""The signed-in user's settings (/account/): their API token and their digest subscription,
managed on the digest pages (/digest/, papers.views)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from papers import selectors as paper_selectors


@login_required
def account(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/account.html", {
        "token": Token.objects.filter(user=request.user).first(),
        "subscription": paper_selectors.subscription_for_user(request.user),
    })


@require_POST
@login_required
def rotate_token(request: HttpRequest) -> HttpResponse:
    """Create (or replace) the user's API token; the old one stops working at once."""
    Token.objects.filter(user=request.user).delete()
    Token.objects.create(user=request.user)
    messages.success(request, "New API token created; the old one no longer works.")
    return redirect("frontend:account")

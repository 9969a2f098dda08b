"""Digest pages: subscribe form, confirmation link, one-click unsubscribe, and settings.

Thin: each view validates a form or reads a signed token and calls papers.digest.subscriptions. The
unsubscribe URL also takes the RFC 8058 one-click POST from mail clients (no CSRF token there).
A plain GET of an emailed link (confirm or unsubscribe) only shows a button, so mail scanners that
fetch every link cannot subscribe or unsubscribe anyone.
"""
from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from infrawiki import throttling
from papers.digest import subscriptions, tokens
from papers.digest.forms import PreferencesForm, SubscribeForm
from papers.scoring.topics import TOPICS


def _invalid_link(request: HttpRequest, error: tokens.SubscriptionError) -> HttpResponse:
    return render(request, "papers/digest/link_error.html", {"error": str(error)}, status=400)


@require_http_methods(["GET", "POST"])
def subscribe(request: HttpRequest) -> HttpResponse:
    """The subscribe form; each client gets SUBSCRIBE_THROTTLE_CLIENT confirmation emails per window,
    whatever addresses it types (each address has its own limit in the service too)."""
    form = SubscribeForm(request.POST or None)
    rate, client = throttling.Rate.parse(settings.SUBSCRIBE_THROTTLE_CLIENT), throttling.client_ip(request)
    if request.method == "POST" and throttling.limited("subscribe-client", client, rate):
        form.is_valid()
        form.add_error(None, "This connection asked for a confirmation email a few minutes ago: check that "
                             "inbox (and its spam folder), or try again later.")
        return render(request, "papers/digest/subscribe.html", {"form": form}, status=429)
    if request.method == "POST" and form.is_valid():
        try:
            subscription = subscriptions.subscribe(
                form.cleaned_data["email"], form.cleaned_data["topics"], form.cleaned_data["min_score"]
            )
        except tokens.SubscriptionError as exc:
            form.add_error(None, str(exc))
        else:
            throttling.count("subscribe-client", client, rate)
            return render(request, "papers/digest/check_inbox.html", {"email": subscription.email})
    status = 400 if request.method == "POST" else 200
    return render(request, "papers/digest/subscribe.html", {"form": form}, status=status)


@require_http_methods(["GET", "POST"])
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET: the button; POST (the button, with its CSRF token): use the one-time link."""
    try:
        if request.method == "GET":
            subscription = subscriptions.confirmable(token)
            return render(request, "papers/digest/confirm.html", {"subscription": subscription})
        subscription = subscriptions.confirm(token)
    except tokens.SubscriptionError as exc:
        return _invalid_link(request, exc)
    settings_url = tokens.link(subscription, "manage", "papers:settings")
    return render(request, "papers/digest/confirmed.html", {"subscription": subscription, "settings_url": settings_url})


@csrf_exempt  # RFC 8058: mail clients POST "List-Unsubscribe=One-Click" without a CSRF token
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        subscription = tokens.read_token(token, "manage")
        if request.method == "POST":
            subscriptions.unsubscribe(token)
            subscription.refresh_from_db()
    except tokens.SubscriptionError as exc:
        return _invalid_link(request, exc)
    return render(request, "papers/digest/unsubscribe.html", {"subscription": subscription, "done": request.method == "POST"})


@require_http_methods(["GET", "POST"])
def preferences(request: HttpRequest, token: str) -> HttpResponse:
    try:
        subscription = tokens.read_token(token, "manage")
    except tokens.SubscriptionError as exc:
        return _invalid_link(request, exc)
    initial = {"topics": subscription.topics, "min_score": subscription.min_score}
    form = PreferencesForm(request.POST or None, initial=initial)
    saved = False
    if request.method == "POST" and form.is_valid():
        subscriptions.update_preferences(subscription, form.cleaned_data["topics"], form.cleaned_data["min_score"])
        saved = True
    context = {"form": form, "subscription": subscription, "saved": saved, "token": token,
               "topic_labels": [TOPICS[t][0] for t in subscription.topics]}
    return render(request, "papers/digest/settings.html", context, status=400 if form.errors else 200)

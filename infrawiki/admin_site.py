"""The admin site, with failed logins at /admin/login/ limited per account and per client by the
same counters as the site's login form and the token endpoint (infrawiki.throttling): before,
any number of passwords could be tried there at request speed."""
from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from infrawiki.api_errors import refusal
from infrawiki.throttling import count_login_failure, login_blocked


class AdminSite(admin.AdminSite):
    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        if request.method != "POST":
            return super().login(request, extra_context)
        username = request.POST.get("username", "")
        wait = login_blocked(request, username)
        if wait is not None:
            response = refusal(request, 429, "too many requests", heading="Too many failed logins",
                               hint=f"Too many failed logins. Wait {max(1, wait // 60)} minutes, then try again.")
            response["Retry-After"] = str(wait)
            return response
        response = super().login(request, extra_context)
        if response.status_code == 200:  # the form came back with an error: not logged in
            count_login_failure(request, username)
        return response

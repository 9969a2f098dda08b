"""The login page (/login/): Django's LoginView with failed attempts limited per account and per
client (infrawiki.throttling), so passwords cannot be guessed at request speed."""
from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.http import HttpResponse

from infrawiki.throttling import count_login_failure, login_blocked


class LoginView(auth_views.LoginView):
    template_name = "frontend/login.html"

    def post(self, request, *args, **kwargs) -> HttpResponse:
        username = request.POST.get("username", "")
        wait = login_blocked(request, username)
        if wait is not None:
            blocked = f"Too many failed logins. Wait {max(1, wait // 60)} minutes, then try again."
            form = self.form_class(request, initial={"username": username})
            response = self.render_to_response(self.get_context_data(form=form, blocked=blocked), status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form) -> HttpResponse:
        count_login_failure(self.request, self.request.POST.get("username", ""))
        return super().form_invalid(form)

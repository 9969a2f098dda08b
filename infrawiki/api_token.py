"""POST /api/auth/token/: a user's API token for their username and password, with failed
attempts limited per account and per client like the login form (infrawiki.throttling)."""
from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authtoken.views import ObtainAuthToken

from infrawiki.api_parsers import FormParser, JSONParser, MultiPartParser
from infrawiki.cli import refuse_argv
from infrawiki.throttling import count_login_failure, login_blocked


class ObtainToken(ObtainAuthToken):
    """DRF's token view with the login limits (DRF's own has no throttle at all)."""

    parser_classes = [JSONParser, FormParser, MultiPartParser]  # DRF's view names its own

    def post(self, request, *args, **kwargs):
        data = request.data
        username = data.get("username", "") if hasattr(data, "get") else ""
        password = data.get("password", "") if hasattr(data, "get") else ""
        if not (isinstance(username, str) and isinstance(password, str)) or len(username) > 150 \
                or len(password) > 4096 or refuse_argv([username, password]):
            raise exceptions.ValidationError({"non_field_errors": ["Send username and password as short text."]})
        wait = login_blocked(request, username)
        if wait is not None:
            raise exceptions.Throttled(wait, detail="Too many failed logins; wait, then try again.")
        try:
            return super().post(request, *args, **kwargs)
        except exceptions.ValidationError:
            count_login_failure(request, username)
            raise


obtain_token = ObtainToken.as_view()

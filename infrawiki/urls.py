"""URL map: the browser UI at /, the REST API under /api/, the admin under /admin/."""
from django.contrib import admin
from django.urls import include, path

from infrawiki.health import health

urlpatterns = [
    path("health", health, name="health"),
    path("admin/", admin.site.urls),
    path("api/", include(("infrawiki.api_urls", "api"))),
    path("digest/", include("papers.urls")),
    path("", include("frontend.urls")),
]

# /api/ paths answer errors in the API's JSON shape, pages in the site layout.
handler400 = "frontend.views.errors.bad_request"
handler403 = "frontend.views.errors.permission_denied"
handler404 = "frontend.views.errors.not_found"
handler500 = "frontend.views.errors.server_error"

"""URL map: the browser UI at /, the REST API under /api/, the admin under /admin/."""
from django.contrib import admin
from django.urls import include, path

from infrawiki.health import health

urlpatterns = [
    path("health", health, name="health"),
    path("admin/", admin.site.urls),
    path("digest/", include("papers.urls")),
    path("", include("frontend.urls")),
]

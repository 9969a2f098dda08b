"""URL map: the browser UI at /, the REST API under /api/, the admin under /admin/."""
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("frontend.urls")),
]

"""Digest pages, mounted at /digest/ by infrawiki/urls.py."""
from django.urls import path

from papers import views

app_name = "papers"
urlpatterns = [
    path("", views.subscribe, name="subscribe"),
    path("confirm/<str:token>/", views.confirm, name="confirm"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("settings/<str:token>/", views.preferences, name="settings"),
]

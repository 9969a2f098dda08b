"""The REST API's URL map, included at /api/ (namespace "api"): endpoints, OpenAPI schema, docs.

Session authentication serves the browser (CSRF-checked), tokens serve tools: POST /api/auth/token/
with username and password returns `{"token": ...}`; send it as `Authorization: Token <key>`.
"""
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from advisor.diagnose_api import DiagnoseView
from infrawiki.api_token import obtain_token
from ontology.api import EntityViewSet, FactViewSet, ParameterViewSet, SearchView
from papers.api import MySubscriptionView, PaperViewSet, RepoViewSet, ScoreViewSet

router = DefaultRouter()
router.register("papers", PaperViewSet, basename="paper")
router.register("scores", ScoreViewSet, basename="score")
router.register("repositories", RepoViewSet, basename="repository")
router.register("facts", FactViewSet, basename="fact")
router.register("entities", EntityViewSet, basename="entity")
router.register("parameters", ParameterViewSet, basename="parameter")

urlpatterns = [
    path("", include(router.urls)),
    path("search", SearchView.as_view(), name="search"),
    path("advisor/", include("advisor.urls")),
    path("diagnose", DiagnoseView.as_view(), name="diagnose"),
    path("me/subscription/", MySubscriptionView.as_view(), name="my-subscription"),
    path("auth/token/", obtain_token, name="token"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
]

"""Browser pages (server-rendered; see frontend/views/)."""
from django.contrib.auth import views as auth_views
from django.urls import path, re_path

from frontend.views import (
    account,
    advisor,
    dashboard,
    login,
    papers,
    review,
    search,
    setup,
    techniques,
    upload,
    wiki,
)
from papers.selectors import ARXIV_ID_URL_PATTERN

app_name = "frontend"
urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("pipeline/", dashboard.pipeline_fragment, name="pipeline"),
    path("papers/", papers.paper_list, name="paper-list"),
    re_path(rf"^papers/(?P<arxiv_id>{ARXIV_ID_URL_PATTERN})/$", papers.paper_page, name="paper"),
    path("search/", search.search, name="search"),
    path("upload/", upload.upload_pdf, name="upload"),
    path("review/", review.review_queue, name="review"),
    path("review/identity/<int:conflict_id>/accept/", review.accept_identity, name="identity-accept"),
    path("facts/<int:fact_id>/", review.fact_page, name="fact"),
    re_path(r"^facts/(?P<fact_id>\d+)/(?P<action>verify|reject)/$", review.review_fact, name="fact-review"),
    path("parameters/", wiki.parameter_index, name="parameters"),
    path("parameters/<str:name>/", wiki.parameter_page, name="parameter"),
    # `path`: an entity key is a lower-cased subject, and subjects may hold a slash ("vLLM/SGLang")
    path("entities/<path:key>/", wiki.entity_page, name="entity"),
    path("facts/<int:fact_id>/techniques/", techniques.fact_techniques, name="fact-techniques"),
    path("techniques/", techniques.technique_index, name="techniques"),
    path("techniques/<str:name>/", techniques.technique_page, name="technique"),
    path("diagnose/", techniques.diagnose_page, name="diagnose"),
    path("setup/", setup.save_setup, name="save-setup"),
    path("advisor/", advisor.advisor_form, name="advisor"),
    path("advisor/result/", advisor.advisor_result, name="advisor-result"),
    path("account/", account.account, name="account"),
    path("account/token/", account.rotate_token, name="rotate-token"),
    path("login/", login.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="/"), name="logout"),
]

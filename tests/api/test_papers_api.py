"""Papers, scores and repositories over the REST API: lists, filters, detail, pagination, errors."""
import pytest

pytestmark = pytest.mark.django_db


def test_the_paper_list_is_paginated_and_carries_the_latest_score(client, web):
    body = client.get("/api/papers/").json()
    assert body["count"] == 3
    by_id = {p["arxiv_id"]: p for p in body["results"]}
    assert by_id["2309.06180"]["score"] == 8.5
    assert by_id["2401.09670"]["score"] is None
    assert body["results"][0]["arxiv_id"] == "2309.06180", "newest first"


def test_the_paper_list_filters_by_text_status_and_minimum_score(client, web):
    assert [p["arxiv_id"] for p in client.get("/api/papers/?q=PagedAttention").json()["results"]] == ["2309.06180"]
    assert [p["arxiv_id"] for p in client.get("/api/papers/?status=parsed").json()["results"]] == ["2401.09670"]
    assert {p["arxiv_id"] for p in client.get("/api/papers/?min_score=6").json()["results"]} == {
        "2309.06180", "2403.02310"}
    ordered = client.get("/api/papers/?ordering=-score").json()["results"]
    assert [p["arxiv_id"] for p in ordered] == ["2309.06180", "2403.02310", "2401.09670"]


def test_a_bad_filter_answers_400_in_the_error_shape(client, web):
    response = client.get("/api/papers/?min_score=eleven&status=nope")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid input"
    assert set(body["detail"]) == {"min_score", "status"}
    assert "hint" in body


def test_a_paper_has_sections_score_and_repository(client, web):
    body = client.get("/api/papers/2309.06180/").json()
    assert body["authors"] == ["Woosuk Kwon", "Zhuohan Li", "Siyuan Zhuang"]
    assert [s["title"] for s in body["sections"]] == ["Method", "Evaluation"]
    assert body["score"]["total"] == 8.5
    assert body["score"]["evidence"]["code_availability"][0]["points"] == 2.0
    assert body["repositories"][0]["full_name"] == "vllm-project/vllm"


def test_an_unknown_paper_and_an_unknown_endpoint_are_404_in_the_error_shape(client, web):
    for url in ("/api/papers/9999.99999/", "/api/nothing-here/"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert response.json()["error"] == "not found"


def test_a_page_past_the_end_is_404_with_a_reason(client, web):
    response = client.get("/api/papers/?page=9")
    assert response.status_code == 404
    assert response.json()["error"] == "not found"
    assert "page" in response.json()["detail"].lower()


def test_scores_are_best_first_and_filter_by_tier(client, web):
    body = client.get("/api/scores/").json()
    assert [s["paper"] for s in body["results"]] == ["2309.06180", "2403.02310"]
    assert [s["paper"] for s in client.get("/api/scores/?tier=to_verify").json()["results"]] == ["2403.02310"]
    assert client.get("/api/scores/2309.06180/").json()["quadrant"] == "quick_win"


def test_a_repository_is_addressed_by_owner_and_name(client, web):
    body = client.get("/api/repositories/vllm-project/vllm/").json()
    assert body["stars"] == 30000 and body["has_ci"] is True


def test_the_paper_list_costs_the_same_queries_for_one_or_many_papers(client, web, django_assert_num_queries):
    with django_assert_num_queries(3):  # count + one page, and the rate limit's count (infrawiki.rate_counter)
        assert len(client.get("/api/papers/").json()["results"]) == 3
    with django_assert_num_queries(3):
        client.get("/api/scores/")


def test_a_page_of_the_paper_list_is_then_served_from_the_cache(client, web, django_assert_num_queries):
    first = client.get("/api/papers/?ordering=-score").json()
    with django_assert_num_queries(1):  # only the rate limit's count
        assert client.get("/api/papers/?ordering=-score").json() == first
    with django_assert_num_queries(3):  # another page or filter is another entry
        client.get("/api/papers/?ordering=title")


def test_with_the_cache_off_every_request_reads_the_database(client, web, settings, django_assert_num_queries):
    settings.API_LIST_CACHE_S = 0
    client.get("/api/papers/")
    with django_assert_num_queries(3):  # count + one page + the rate limit's count
        client.get("/api/papers/")


def test_the_openapi_schema_and_the_docs_page_are_served_without_a_cdn(client, web):
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    assert "/api/papers/" in schema.json()["paths"]
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs
    assert "cdn" not in docs.lower() and "unpkg" not in docs.lower()
    assert "/static/drf_spectacular_sidecar/" in docs


def test_the_schema_generates_valid_openapi_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert "/api/facts/{id}/verify/" in (tmp_path / "schema.yaml").read_text()

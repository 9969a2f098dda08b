"""Facts, entities, parameters and search over the REST API; review actions for editors only."""
import pytest

from ontology.models import Fact
from tests.frontend.data import token_client

pytestmark = pytest.mark.django_db


def test_facts_filter_by_kind_parameter_subject_paper_and_status(client, web):
    def ids(query):
        return {f["id"] for f in client.get(f"/api/facts/?{query}").json()["results"]}

    f = web.facts
    assert ids("kind=constraint") == {f["gpu"].id}
    assert ids("parameter=chunk_size") == {f["chunk_a"].id, f["chunk_b"].id}
    assert ids("subject=VLLM&paper=2309.06180") == {f["block_size"].id, f["gpu"].id, f["hostile"].id}
    assert ids("status=verified") == set()


def test_a_fact_comes_with_its_quote_page_and_revisions(client, web):
    body = client.get(f"/api/facts/{web.facts['block_size'].id}/").json()
    assert body["quote"] == "we set the block size to 16 tokens" and body["page"] == 7
    assert [r["action"] for r in body["revisions"]] == ["create"]


def test_an_editor_verifies_rejects_and_edits_and_each_is_a_revision(web):
    editor = token_client(web.users["editor"])
    fact = web.facts["gpu"]
    assert editor.post(f"/api/facts/{fact.id}/verify/", {"note": "p.8 says so"}, format="json").json()["status"] == "verified"
    assert editor.post(f"/api/facts/{fact.id}/reject/", {}, format="json").json()["status"] == "rejected"
    body = editor.patch(f"/api/facts/{web.facts['block_size'].id}/", {"value": "32", "note": "table 2"},
                        format="json").json()
    assert body["value"] == "32"
    assert [r["action"] for r in body["revisions"]] == ["create", "edit"]
    assert body["revisions"][-1]["note"] == "table 2" and body["revisions"][-1]["actor"] == "editor"


def test_an_invalid_edit_is_a_400_naming_the_field_and_changes_nothing(web):
    fact = web.facts["block_size"]
    response = token_client(web.users["editor"]).patch(f"/api/facts/{fact.id}/", {"value": "fast"}, format="json")
    assert response.status_code == 400
    assert "value" in response.json()["detail"]
    assert Fact.objects.get(id=fact.id).value == "16"


@pytest.mark.parametrize("role", ["outsider", "owner"])
def test_users_who_are_not_editors_cannot_review_or_edit(web, role):
    client = token_client(web.users[role])
    fact = web.facts["gpu"]
    for response in (client.post(f"/api/facts/{fact.id}/verify/"), client.post(f"/api/facts/{fact.id}/reject/"),
                     client.patch(f"/api/facts/{fact.id}/", {"value": "H100"}, format="json")):
        assert response.status_code == 403
        assert response.json()["error"] == "permission denied"
        assert "editors" in response.json()["detail"]
    assert Fact.objects.get(id=fact.id).status == "extracted"


def test_anonymous_callers_must_authenticate_to_review(client, web):
    response = client.post(f"/api/facts/{web.facts['gpu'].id}/verify/")
    assert response.status_code == 401


def test_an_admin_can_review_without_being_in_the_editors_group(web):
    response = token_client(web.users["admin"]).post(f"/api/facts/{web.facts['gpu'].id}/verify/")
    assert response.status_code == 200


def test_a_parameter_lists_every_value_and_the_disagreement(client, web):
    body = client.get("/api/parameters/chunk_size/").json()
    assert {f["value"] for f in body["facts"]} == {"512", "2048"}
    assert body["unit"] == "tokens"
    assert {v["paper"] for v in body["conflicts"][0]["values"]} == {"2403.02310", "2401.09670"}
    names = {p["parameter"] for p in client.get("/api/parameters/").json()["results"]}
    assert {"block_size", "chunk_size"} <= names


def test_an_entity_has_its_facts_and_papers(client, web):
    body = client.get("/api/entities/vllm/").json()
    assert body["entity"]["name"] == "vLLM" and body["papers"] == ["2309.06180"]
    assert client.get("/api/entities/nothing/").status_code == 404


def test_hybrid_search_finds_the_fact_about_block_size(client, web_indexed):
    body = client.get("/api/search?q=KV cache block size").json()
    assert body["results"], "no results"
    assert any(r["type"] == "fact" and r.get("fact_id") == web_indexed.facts["block_size"].id
               for r in body["results"][:3])
    assert client.get("/api/search?q=").status_code == 400


def test_the_fact_list_costs_the_same_queries_for_any_number_of_facts(client, web, django_assert_num_queries):
    with django_assert_num_queries(3):  # count + one page (papers and entities joined) + the rate limit's count
        assert client.get("/api/facts/").json()["count"] == 5

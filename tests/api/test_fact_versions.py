"""Optimistic concurrency on facts over the REST API: every write bumps a version (the ETag); a write
made against an older version is refused with the current fact; a write without one changes only the
fields it sends; the history's "before" is what was stored."""
import pytest

from ontology.models import Fact
from tests.frontend.data import token_client

pytestmark = pytest.mark.django_db


def test_a_fact_carries_its_version_in_the_json_and_as_its_etag(client, web):
    fact = web.facts["block_size"]
    response = client.get(f"/api/facts/{fact.id}/")
    assert response.json()["version"] == 1 and response["ETag"] == '"1"'
    editor = token_client(web.users["editor"])
    response = editor.post(f"/api/facts/{fact.id}/verify/", {}, format="json")
    assert response.json()["version"] == 2 and response["ETag"] == '"2"'
    response = editor.patch(f"/api/facts/{fact.id}/", {"condition": "ShareGPT"}, format="json")
    assert response.json()["version"] == 3 and response["ETag"] == '"3"'


def test_an_edit_with_a_stale_if_match_is_a_412_with_the_current_fact_and_changes_nothing(web):
    fact = web.facts["block_size"]
    alice, bob = token_client(web.users["editor"]), token_client(web.users["admin"])
    etag = alice.get(f"/api/facts/{fact.id}/")["ETag"]
    assert bob.patch(f"/api/facts/{fact.id}/", {"value": "32"}, format="json", HTTP_IF_MATCH=etag).status_code == 200
    response = alice.patch(f"/api/facts/{fact.id}/", {"value": "8"}, format="json", HTTP_IF_MATCH=etag)
    assert response.status_code == 412
    body = response.json()
    assert body["error"] == "precondition failed" and 'If-Match: "2"' in body["hint"]
    assert body["detail"]["current"]["value"] == "32" and body["detail"]["your_version"] == 1
    assert response["ETag"] == '"2"'
    assert Fact.objects.get(id=fact.id).value == "32"


@pytest.mark.parametrize("action", ["verify", "reject"])
def test_a_review_sent_with_a_stale_version_field_is_a_409_and_changes_nothing(web, action):
    fact = web.facts["gpu"]
    editor = token_client(web.users["editor"])
    editor.patch(f"/api/facts/{fact.id}/", {"value": "H100"}, format="json")
    response = editor.post(f"/api/facts/{fact.id}/{action}/", {"version": 1}, format="json")
    assert response.status_code == 409
    assert response.json()["error"] == "edit conflict"
    assert response.json()["detail"]["current"]["value"] == "H100"
    assert Fact.objects.get(id=fact.id).revisions.filter(action=action).count() == 0
    assert editor.post(f"/api/facts/{fact.id}/{action}/", {"version": 2}, format="json").status_code == 200


def test_an_if_match_naming_the_current_version_or_any_goes_through(web):
    fact = web.facts["block_size"]
    editor = token_client(web.users["editor"])
    assert editor.patch(f"/api/facts/{fact.id}/", {"value": "32"}, format="json", HTTP_IF_MATCH='"1"').status_code == 200
    assert editor.patch(f"/api/facts/{fact.id}/", {"value": "64"}, format="json", HTTP_IF_MATCH="*").status_code == 200
    assert editor.patch(f"/api/facts/{fact.id}/", {"value": "8"}, format="json",
                        HTTP_IF_MATCH='"not-a-version"').status_code == 412
    for hostile in ('"' + "9" * 5000 + '"', '"²"', '"2147483648"'):  # not a tag this API gave out
        assert editor.patch(f"/api/facts/{fact.id}/", {"value": "8"}, format="json",
                            HTTP_IF_MATCH=hostile).status_code == 412
    assert Fact.objects.get(id=fact.id).value == "64"


def test_two_tools_without_if_match_each_change_only_the_field_they_send(web):
    fact = web.facts["block_size"]
    alice, bob = token_client(web.users["editor"]), token_client(web.users["admin"])
    assert alice.patch(f"/api/facts/{fact.id}/", {"value": "32"}, format="json").status_code == 200
    body = bob.patch(f"/api/facts/{fact.id}/", {"condition": "ShareGPT trace"}, format="json").json()
    assert (body["value"], body["condition"]) == ("32", "ShareGPT trace")
    last = body["revisions"][-1]
    assert (last["before"]["value"], last["before"]["condition"]) == ("32", "")

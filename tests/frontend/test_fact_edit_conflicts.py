"""Two editors, one fact, in the browser: a page opened before someone else's save never reverts that
save. The edit form writes only the fields the person changed, onto the version it was opened at; a
stale save shows the fact as it is now instead of overwriting it."""
import pytest
from django.test import Client

from ontology.models import Fact
from tests.frontend.data import password
from tests.frontend.html_forms import form_values

pytestmark = pytest.mark.django_db


def editor_client(name: str) -> Client:
    client = Client()
    assert client.login(username=name, password=password(name))
    return client


def opened(client: Client, fact: Fact) -> dict[str, str]:
    return form_values(client.get(f"/facts/{fact.id}/").content.decode(), field="subject")


def test_saving_a_page_opened_before_another_editors_correction_does_not_revert_it(web):
    fact = web.facts["block_size"]
    alice, bob = editor_client("editor"), editor_client("admin")
    alice_form, bob_form = opened(alice, fact), opened(bob, fact)
    alice.post(f"/facts/{fact.id}/", {**alice_form, "value": "32", "note": "table 2"})
    response = bob.post(f"/facts/{fact.id}/", {**bob_form, "condition": "ShareGPT trace"})
    html = response.content.decode()
    assert response.status_code == 409
    assert "Not saved: someone changed this fact after you opened this page (value is now “32”)" in html
    stored = Fact.objects.get(id=fact.id)
    assert (stored.value, stored.condition) == ("32", "")
    again = form_values(html, field="subject")
    assert again["condition"] == "ShareGPT trace", "the person's value is kept in the form"
    assert again["value"] == "32", "a field the person did not touch shows the current value"
    assert (again["initial-value"], again["version"]) == ("32", str(stored.version))
    bob.post(f"/facts/{fact.id}/", again)
    stored.refresh_from_db()
    assert (stored.value, stored.condition) == ("32", "ShareGPT trace")
    before = stored.revisions.latest("id").before
    assert (before["value"], before["condition"]) == ("32", "")


def test_the_form_writes_only_the_fields_the_person_changed(web):
    fact = web.facts["block_size"]
    alice = editor_client("editor")
    form = opened(alice, fact)
    Fact.objects.filter(id=fact.id).update(unit="")  # a value the form shows differently is left alone
    form["version"] = str(Fact.objects.get(id=fact.id).version)
    alice.post(f"/facts/{fact.id}/", {**form, "page": "8"})
    revision = Fact.objects.get(id=fact.id).revisions.latest("id")
    assert [k for k in revision.after if revision.after[k] != revision.before[k]] == ["page", "status"]


def test_saving_an_unchanged_form_writes_nothing(web):
    fact = web.facts["block_size"]
    alice = editor_client("editor")
    response = alice.post(f"/facts/{fact.id}/", opened(alice, fact), follow=True)
    assert "Nothing to save" in response.content.decode()
    assert Fact.objects.get(id=fact.id).revisions.count() == 1


def test_verifying_from_a_queue_page_loaded_before_an_edit_shows_the_fact_instead(web):
    fact = web.facts["gpu"]
    alice, bob = editor_client("editor"), editor_client("admin")
    queue = alice.get("/review/").content.decode()
    verify = form_values(queue, action=f"/facts/{fact.id}/verify/")
    bob.post(f"/facts/{fact.id}/", {**opened(bob, fact), "value": "H100"})
    response = alice.post(f"/facts/{fact.id}/verify/", {**verify, "next": "/review/"}, follow=True)
    assert response.redirect_chain[-1][0] == f"/facts/{fact.id}/"
    assert "changed after your page was loaded" in response.content.decode()
    assert Fact.objects.get(id=fact.id).revisions.filter(action="verify").count() == 0

"""The review queue and a fact's page: editors verify, reject and edit; everyone else only reads."""
import pytest

from ontology.models import Fact, FactRevision
from tests.frontend.data import password
from tests.frontend.html_forms import form_values

pytestmark = pytest.mark.django_db


def login(client, web, name):
    assert client.login(username=name, password=password(name))


def test_the_queue_lists_unreviewed_facts_least_confident_first(client, web):
    html = client.get("/review/").content.decode()
    assert html.index("max_num_seqs") < html.index("block_size"), "confidence 0.3 before 0.9"
    assert "Log in</a> as an editor" in html
    assert "Verify fact" not in html


def test_an_editor_verifies_a_fact_from_the_queue_and_returns_to_it(client, web):
    login(client, web, "editor")
    fact = web.facts["gpu"]
    response = client.post(f"/facts/{fact.id}/verify/", {"next": "/review/"})
    assert response.status_code == 302 and response["Location"] == "/review/"
    fact.refresh_from_db()
    assert fact.status == "verified"
    revision = FactRevision.objects.filter(fact=fact).latest("id")
    assert (revision.action, revision.actor) == ("verify", "editor")


@pytest.mark.parametrize("target", ["0", "frontend:review", "//evil.example/x", "https://evil.example/"])
def test_a_next_that_is_not_a_page_of_this_site_never_becomes_a_server_error_or_a_way_out(client, web, target):
    login(client, web, "editor")
    response = client.post(f"/facts/{web.facts['gpu'].id}/verify/", {"next": target})
    assert response.status_code == 302
    assert response["Location"] in (target, "/review/") and "evil" not in response["Location"]

@pytest.mark.parametrize("version", ["9" * 5000, "-3", "2147483648", "v2"])
def test_a_review_carrying_a_version_that_is_not_one_is_refused_and_the_fact_is_left_as_it_was(
        client, web, version):
    login(client, web, "editor")
    fact = web.facts["gpu"]
    before = (fact.status, fact.version)
    response = client.post(f"/facts/{fact.id}/verify/", {"version": version}, follow=True)
    assert response.status_code == 200 and response.redirect_chain[-1][0] == f"/facts/{fact.id}/"
    assert "Not verified: version:" in response.content.decode()
    fact.refresh_from_db()
    assert (fact.status, fact.version) == before


def test_an_editor_rejects_a_fact_and_it_leaves_the_paper_page(client, web):
    login(client, web, "editor")
    fact = web.facts["hostile"]
    client.post(f"/facts/{fact.id}/reject/", {"note": "not what the quote says"})
    assert Fact.objects.get(id=fact.id).status == "rejected"
    assert "max_num_seqs" not in client.get("/papers/2309.06180/").content.decode()


def test_an_outsider_cannot_verify_and_nothing_changes(client, web):
    login(client, web, "outsider")
    fact = web.facts["gpu"]
    response = client.post(f"/facts/{fact.id}/verify/")
    assert response.status_code == 403
    assert "Only editors can review facts." in response.content.decode()
    assert Fact.objects.get(id=fact.id).status == "extracted"


def test_an_editor_edits_a_fact_and_the_history_shows_before_and_after(client, web):
    login(client, web, "editor")
    fact = web.facts["block_size"]
    form = {**form_values(client.get(f"/facts/{fact.id}/").content.decode(), field="subject"),
            "value": "32", "note": "the table says 32"}
    response = client.post(f"/facts/{fact.id}/", form, follow=True)
    html = response.content.decode()
    assert Fact.objects.get(id=fact.id).value == "32"
    assert "the table says 32" in html
    assert "<del>16</del> → <ins>32</ins>" in html


def test_an_invalid_edit_names_the_field_and_keeps_the_fact(client, web):
    login(client, web, "editor")
    fact = web.facts["block_size"]
    form = {**form_values(client.get(f"/facts/{fact.id}/").content.decode(), field="subject"), "value": "fast"}
    response = client.post(f"/facts/{fact.id}/", form)
    assert response.status_code == 200
    assert "fast" in response.content.decode() and 'role="alert"' in response.content.decode()
    assert Fact.objects.get(id=fact.id).value == "16"


def test_the_parameter_page_highlights_papers_that_disagree(client, web):
    html = client.get("/parameters/chunk_size/").content.decode()
    assert "Disagreements" in html
    assert html.count('class="conflict"') == 2
    assert "512" in html and "2048" in html


def test_the_entity_page_lists_its_facts_by_parameter(client, web):
    html = client.get("/entities/vllm/").content.decode()
    assert "block_size" in html and "we set the block size to 16 tokens" in html


def test_the_review_queue_costs_the_same_queries_for_any_number_of_facts(client, web, django_assert_num_queries):
    login(client, web, "editor")
    client.get("/review/")
    with django_assert_num_queries(6):  # session, user, editor group, count, one page of facts, PDFs held apart
        client.get("/review/")


def test_a_held_pdf_shows_both_titles_above_the_facts_with_a_named_accept_button(client, web):
    from papers.models import IdentityConflict
    from tests.frontend.data import _paper

    held = _paper("2309.06181", "A Survey That Quotes The PagedAttention arXiv Id", 1)
    IdentityConflict.objects.create(paper=held, claimed=web.papers["vllm"], hint_source="stamp",
                                    reason="the stored paper under that id has another title", pdf_sha256="a" * 64)
    login(client, web, "editor")
    html = client.get("/review/").content.decode()
    section = html[html.index('id="identity-h"'):]
    assert "A Survey That Quotes The PagedAttention arXiv Id" in section
    assert web.papers["vllm"].title in section, "the title the PDF was not taken for is shown too"
    assert "Accept as arXiv:2309.06180</button>" in section
    assert html.index('id="identity-h"') < html.index("<table"), "a long queue must not bury the held PDFs"

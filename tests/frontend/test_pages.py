"""The read-only pages render with the test corpus, escape extracted text, and keep their query counts."""
import pytest

from tests.frontend.data import HOSTILE

pytestmark = pytest.mark.django_db


def test_the_dashboard_shows_new_papers_top_scores_and_pipeline_progress(client, web):
    html = client.get("/").content.decode()
    assert "Efficient Memory Management" in html  # published 3 days ago
    assert "Sarathi-Serve" in html  # top scored, though not new
    assert 'id="stage-extracted"' in html and 'value="2"' in html  # 2 of 3 papers extracted


def test_the_pipeline_panel_is_served_alone_for_refreshing(client, web):
    html = client.get("/pipeline/").content.decode()
    assert html.lstrip().startswith('<section class="card" id="pipeline"')


def test_the_paper_list_filters_and_shows_scores(client, web):
    html = client.get("/papers/?status=parsed").content.decode()
    assert "DistServe" in html and "Sarathi" not in html


def test_the_paper_page_has_scorecard_repository_facts_and_sections(client, web):
    html = client.get("/papers/2309.06180/").content.decode()
    assert "8.5/10" in html and "official repository with a licence" in html
    assert "vllm-project/vllm" in html and "Apache-2.0" in html
    assert "we set the block size to 16 tokens" in html
    assert "https://arxiv.org/pdf/2309.06180v1#page=7" in html
    assert "Method" in html and "pp. 4–7" in html


def test_extracted_text_is_escaped_never_executed(client, web):
    html = client.get("/papers/2309.06180/").content.decode()
    assert HOSTILE not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html


def test_an_unknown_paper_is_a_friendly_404_page(client, web):
    response = client.get("/papers/0000.00000/")
    assert response.status_code == 404
    assert "Nothing here" in response.content.decode()


def test_the_paper_list_page_costs_the_same_queries_for_any_number_of_rows(client, web, django_assert_num_queries):
    with django_assert_num_queries(2):  # count + one page
        client.get("/papers/")


@pytest.mark.parametrize("url", ["/", "/papers/", "/review/", "/parameters/", "/advisor/", "/search/", "/login/"])
def test_every_page_renders_on_an_empty_database(client, db, url):
    response = client.get(url)
    assert response.status_code == 200
    assert "<main" in response.content.decode()


def test_the_dashboard_shows_what_has_been_read_by_technique_and_the_newest_read_papers(client, web):
    from ontology.models import FactTechnique, Technique

    technique, _ = Technique.objects.get_or_create(name="chunked_prefill", defaults={"title": "Chunked prefill"})
    for key in ("chunk_a", "chunk_b"):
        FactTechnique.objects.create(fact=web.facts[key], technique=technique)
    html = client.get("/").content.decode()
    read = html.split('id="read-h"')[1].split("</section>")[0]
    assert f">{technique.title}</a>" in read and "2 papers, 2 facts" in read
    newest = read.split("Newest read")[1]
    # all three are read (extracted or parsed); newest submission first, by the month their arXiv id encodes
    assert newest.index("Sarathi-Serve") < newest.index("DistServe") < newest.index("Efficient Memory Management")


def test_the_pipeline_panel_says_what_an_offline_install_will_and_will_not_do(client, web):
    html = client.get("/pipeline/").content.decode()
    scope = html.split('id="offline-scope"')[1].split("</div>")[0]
    assert "will</strong> search, diagnose and advise from the 3 papers it has read" in scope
    assert "will not</strong> download" in scope and "find new papers" in scope

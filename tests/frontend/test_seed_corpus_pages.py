"""With the bundled seed corpus (214 real papers): list pages and endpoints stay at a fixed query count
and show the corpus, and the dashboard counts it."""
import pytest
from django.core.management import call_command

from papers.models import Paper

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(db) -> int:
    call_command("load_seed", verbosity=0)
    count = Paper.objects.count()
    assert count > 100, "the seed corpus is missing"
    return count


def test_the_paper_list_page_and_endpoint_page_through_the_seed_with_fixed_queries(client, seeded,
                                                                                     django_assert_num_queries):
    with django_assert_num_queries(2):
        html = client.get("/papers/?page=2").content.decode()
    assert f"Page 2 of {-(-seeded // 25)}" in html
    with django_assert_num_queries(3):  # count + one page, and the rate limit's count (infrawiki.rate_counter)
        body = client.get("/api/papers/?page=3&page_size=50").json()
    assert body["count"] == seeded and len(body["results"]) == 50


def test_the_dashboard_counts_the_whole_seed_in_its_pipeline_panel(client, seeded, django_assert_num_queries):
    # read by technique, newest read, new this week, top scored, value matrix, statuses, scored count; the
    # pipeline panel's stage counts, recent events, arXiv health and waiting PDFs (once); facts; running jobs:
    # fixed, whatever the corpus size
    with django_assert_num_queries(14):
        html = client.get("/").content.decode()
    assert f"{seeded} papers known, " in html

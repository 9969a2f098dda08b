"""The arXiv crawl with the real `arxiv` client against a loopback replay of recorded API answers:
paging, the politeness delay, stopping after pages with nothing new, versions, bad answers."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from papers.clients.arxiv import make_client
from papers.models import Paper, PaperRepo, PipelineEvent
from papers.services import crawl_arxiv, import_atom_files

pytestmark = pytest.mark.django_db
RECORDED = ("arxiv_atom", "arxiv_py_2026_recorded")


@pytest.fixture
def replay(arxiv_replay, settings):
    settings.ARXIV_API_URL = f"{arxiv_replay.url}/api/query"
    settings.ARXIV_DELAY_S = 0.3
    return arxiv_replay


def test_a_search_is_read_page_by_page_and_stored(replay) -> None:
    report = crawl_arxiv("testing", max_results=20, page_size=10)
    assert report.pages == 2 and len(report.new) == 20 and not report.errors
    starts = [r["path"].split("start=")[1].split("&")[0] for r in replay.requests]
    assert starts == ["0", "10"]
    paper = Paper.objects.get(arxiv_id="2204.08348")
    assert paper.version == 3 and paper.title and paper.abstract and paper.published
    assert paper.authors.count() >= 1 and paper.pdf_url.endswith("2204.08348v3")



def test_a_crawled_paper_is_found_by_search_before_its_pdf_is_read(replay) -> None:
    from ontology.selectors import hybrid_search

    crawl_arxiv("testing", max_results=10, page_size=10)
    paper = Paper.objects.get(arxiv_id="2204.08348")
    assert paper.status == Paper.Status.NEW and not paper.sections.exists()
    assert paper.arxiv_id in [hit["paper"] for hit in hybrid_search(paper.title, limit=5)]

def test_requests_are_spaced_by_the_politeness_delay(replay) -> None:
    crawl_arxiv("testing", max_results=20, page_size=10)
    gap = replay.requests[1]["at"] - replay.requests[0]["at"]
    assert gap >= 0.3


def test_the_client_is_aimed_at_the_configured_url_and_waits_at_least_the_delay() -> None:
    client = make_client("http://127.0.0.1:9/api/query", 3.0, 50)
    assert 3.0 <= client.delay_seconds <= 3.3  # arXiv asks for one request every three seconds
    assert client.query_url_format == "http://127.0.0.1:9/api/query?{}" and client.page_size == 50


def test_a_second_crawl_stops_after_a_page_with_nothing_new(replay) -> None:
    crawl_arxiv("testing", max_results=20, page_size=10)
    replay.requests.clear()
    report = crawl_arxiv("testing", max_results=20, page_size=10, stop_after_empty_pages=1)
    assert not report.changed and report.stopped_early
    assert len(replay.requests) == 1
    assert "nothing new" in report.summary()


def test_a_newer_version_replaces_the_paper_and_restarts_its_pipeline(replay) -> None:
    crawl_arxiv("testing", max_results=10, page_size=10)
    Paper.objects.filter(arxiv_id="2204.08348").update(version=2, title="old title", status=Paper.Status.PARSED)
    report = crawl_arxiv("testing", max_results=10, page_size=10, stop_after_empty_pages=1)
    assert report.updated == ["2204.08348"]
    paper = Paper.objects.get(arxiv_id="2204.08348")
    assert (paper.version, paper.status) == (3, Paper.Status.NEW) and paper.title != "old title"
    assert PipelineEvent.objects.filter(paper=paper, message__contains="v2 replaced by").exists()


def test_an_older_version_never_replaces_a_newer_one(corpus_dir: Path) -> None:
    path = corpus_dir.joinpath(*RECORDED, "id_2104.12255v1_s0_m100_6ae69987ffe1.json")
    import_atom_files([path])
    Paper.objects.filter(arxiv_id="2104.12255").update(version=2, title="kept")
    report = import_atom_files([path])
    assert report.unchanged == ["2104.12255"]
    assert Paper.objects.get(arxiv_id="2104.12255").title == "kept"


def test_a_seed_entry_is_filled_in_by_the_crawl_without_resetting_its_pipeline(corpus_dir: Path) -> None:
    Paper.objects.create(arxiv_id="2104.12255", version=0, title="seed", status=Paper.Status.PARSED)
    import_atom_files([corpus_dir.joinpath(*RECORDED, "id_2104.12255v1_s0_m100_6ae69987ffe1.json")])
    paper = Paper.objects.get(arxiv_id="2104.12255")
    assert paper.version == 1 and paper.title != "seed" and paper.status == Paper.Status.PARSED


def test_an_arxiv_400_is_recorded_with_arxivs_reason(replay) -> None:
    report = crawl_arxiv(ids=["abc"], max_results=100)
    assert "HTTP 400" in report.errors[0] and "incorrect id format for abc" in report.errors[0]
    assert len(replay.requests) == 1, "a 400 is permanent: no retries"
    assert PipelineEvent.objects.filter(level="error", message__contains="incorrect id format").exists()
    assert not Paper.objects.exists()


def test_an_unknown_id_is_no_change_and_a_known_one_is_fetched(replay) -> None:
    assert not crawl_arxiv(ids=["0000.0000"], max_results=100).changed
    report = crawl_arxiv(ids=["2104.12255v1"], max_results=100)
    assert report.new == ["2104.12255"] and not report.errors


def test_an_answer_that_is_not_atom_is_an_error_not_a_crash(replay) -> None:
    replay.overrides[("testing", "", "0", "10")] = (200, "text/html", b"<html><body>Service maintenance</body></html>")
    report = crawl_arxiv("testing", max_results=10, page_size=10)
    assert report.errors and "not an Atom feed" in report.errors[0] and "<html>" in report.errors[0]
    assert not Paper.objects.exists()


def test_saved_answers_import_and_a_bad_file_does_not_stop_the_others(corpus_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "page.xml"
    bad.write_text("<html>not a feed</html>")
    files = sorted(corpus_dir.joinpath(*RECORDED).glob("*.json")) + [bad]
    files += sorted((corpus_dir / "arxiv_atom" / "arxiv_py_2016_raw").glob("*.xml"))
    report = import_atom_files(files)
    assert len(report.errors) == 2  # the recorded 400 and the HTML page
    assert any("incorrect id format for abc" in e for e in report.errors)
    assert Paper.objects.filter(arxiv_id__in=["1605.08386", "astro-ph/0601001", "1111.2011"]).count() == 3


def test_the_command_prints_what_changed_and_fails_on_bad_files(corpus_dir: Path, capsys) -> None:
    good = corpus_dir.joinpath(*RECORDED, "id_1605.08386_s0_m100_199195aa31ad.json")
    call_command("crawl_arxiv", "--atom-file", str(good))
    out = capsys.readouterr().out
    assert "new: 1605.08386" in out and "changed: 1 new" in out
    call_command("crawl_arxiv", "--atom-file", str(good))
    assert "nothing changed" in capsys.readouterr().out
    with pytest.raises(CommandError, match="could not be used"):
        call_command("crawl_arxiv", "--atom-file", str(corpus_dir.joinpath(*RECORDED, "id_abc_s0_m100_b79c8dcf6bc3.json")))


def test_code_links_in_the_abstract_or_comment_link_the_paper_to_its_repo(corpus_dir: Path) -> None:
    from papers.clients.arxiv import read_atom_file
    from papers.services import upsert_result

    (result,) = read_atom_file(corpus_dir.joinpath(*RECORDED, "id_1605.08386_s0_m100_199195aa31ad.json")).results
    result.comment = "10 pages. Code: https://github.com/example-lab/paged-kv."
    assert upsert_result(result) == "new"
    paper = Paper.objects.get(arxiv_id="1605.08386")
    assert paper.code_urls == ["https://github.com/example-lab/paged-kv"]
    link = PaperRepo.objects.get(paper=paper)
    assert (link.repo.full_name, link.source) == ("example-lab/paged-kv", PaperRepo.Source.ABSTRACT)


def test_an_unreachable_api_is_a_clear_command_error(settings) -> None:
    settings.ARXIV_API_URL = "http://127.0.0.1:9/api/query"  # nothing listens on the discard port
    settings.ARXIV_DELAY_S = 0.0
    with pytest.raises(CommandError, match="unreachable or failing"):
        call_command("crawl_arxiv", "--query", "cat:cs.DC", "--max", "5")


def test_the_crawl_task_gives_up_on_an_unreachable_api_with_a_recorded_reason(settings) -> None:
    from papers.tasks import crawl_arxiv_task

    settings.ARXIV_API_URL = "http://127.0.0.1:9/api/query"
    settings.ARXIV_DELAY_S = 0.0
    result = crawl_arxiv_task.apply(kwargs={"query": "cat:cs.DC", "max_results": 5})  # eager: retries at once
    assert result.successful() and "after 4 retries" in result.result["errors"][0]
    assert PipelineEvent.objects.filter(stage="crawl", level="error", message__contains="unreachable").exists()

"""Malformed arXiv answers: each bad entry is a clear error, the good ones are stored, nothing half.

Built from the recorded answers (astro-ph/0601001, an old-style id, and 1605.08386), joined into
one feed whose first entry is then damaged the way a hostile or broken server might answer.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from papers.models import Author, Paper
from papers.services import crawl_arxiv

pytestmark = pytest.mark.django_db
RECORDED = ("arxiv_atom", "arxiv_py_2026_recorded")
OLD = "id_astro-ph_0601001_s0_m100_3150dca9dc76.json"
NEW = "id_1605.08386_s0_m100_199195aa31ad.json"


def _entry(body: str) -> str:
    return re.search(r"<entry>.*</entry>", body, re.S).group(0)


@pytest.fixture
def two_entry_feed(corpus_dir: Path) -> str:
    """The astro-ph answer with the 1605.08386 entry added after its own."""
    old, new = (json.loads(corpus_dir.joinpath(*RECORDED, name).read_text())["body"] for name in (OLD, NEW))
    return old.replace("</entry>", "</entry>\n" + _entry(new), 1)


DAMAGE = {
    "bad published date": lambda e: re.sub(r"<published>[^<]*</published>", "<published>2006-13-45T99:00:00Z</published>", e),
    "no published date": lambda e: re.sub(r"<published>[^<]*</published>", "", e),
    "20-digit version": lambda e: e.replace("astro-ph/0601001v1<", "astro-ph/0601001v" + "9" * 20 + "<"),
    "long id": lambda e: e.replace("astro-ph/0601001v1<", "astro-ph/" + "0" * 300 + "v1<"),
    "not an id": lambda e: e.replace("abs/astro-ph/0601001v1<", "abs/foo/bar<"),
    "over-long doi": lambda e: e.replace("</summary>", "</summary><arxiv:doi>10." + "1" * 400 + "</arxiv:doi>", 1),
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_entry_is_reported_and_skipped_while_the_other_is_stored(damage, two_entry_feed, tmp_path):
    first, rest = two_entry_feed.split("</entry>", 1)
    path = tmp_path / "answer.xml"
    path.write_text(DAMAGE[damage](first) + "</entry>" + rest)
    with pytest.raises(CommandError, match="could not be used") as caught:
        call_command("crawl_arxiv", "--atom-file", str(path))
    assert caught.value.returncode == 2
    assert list(Paper.objects.values_list("arxiv_id", flat=True)) == ["1605.08386"]
    assert not Author.objects.filter(name__icontains="Gould").exists()  # nothing of the damaged entry


def test_a_live_page_with_a_bad_date_is_a_clear_error_not_a_crash(arxiv_replay, settings, two_entry_feed):
    settings.ARXIV_API_URL, settings.ARXIV_DELAY_S = f"{arxiv_replay.url}/api/query", 0.0
    damaged = DAMAGE["bad published date"](two_entry_feed)
    arxiv_replay.overrides[("", "astro-ph/0601001", "0", "100")] = (200, "application/atom+xml", damaged.encode())
    report = crawl_arxiv(ids=["astro-ph/0601001"])
    assert report.errors and "cannot be read" in report.errors[0]
    assert not Paper.objects.exists()


def test_an_old_style_id_works_in_every_page_and_api_route(corpus_dir):
    call_command("crawl_arxiv", "--atom-file", str(corpus_dir.joinpath(*RECORDED, OLD)))
    client = Client()
    for url in ["/", "/papers/", "/papers/?q=astro-ph/0601001", "/search/?q=astro-ph/0601001",
                "/papers/astro-ph/0601001/", "/api/papers/", "/api/papers/astro-ph/0601001/"]:
        response = client.get(url)
        assert response.status_code == 200, url
    assert b"/papers/astro-ph/0601001/" in client.get("/papers/").content
    assert client.get("/api/papers/astro-ph/0601001/").json()["arxiv_id"] == "astro-ph/0601001"
    assert client.get("/api/scores/astro-ph/0601001/").status_code in (200, 404)
    assert client.get("/papers/astro-ph/0000000/").status_code == 404


@pytest.mark.parametrize("bad", ["foo/bar", "x" * 41, "2309.06180v" + "9" * 20, "../../etc", "2309.06180\x00"])
def test_ingest_pdf_refuses_a_malformed_arxiv_id_before_storing_anything(bad, corpus_dir, data_dir):
    pdf = next((corpus_dir / "pdfs").glob("*.pdf"))
    with pytest.raises(CommandError, match="is not an arXiv id"):
        call_command("ingest_pdf", str(pdf), "--arxiv-id", bad)
    assert not Paper.objects.exists()
    assert not data_dir.exists() or not any(data_dir.rglob("*.pdf"))
    assert Client().get("/").status_code == 200


def test_old_and_new_style_ids_are_accepted_with_versions_and_prefixes():
    from papers.arxiv_ids import ArxivIdError, parse

    assert parse("arXiv:astro-ph/0601001v2") == ("astro-ph/0601001", 2)
    assert parse("math.GT/0309136") == ("math.GT/0309136", 1)
    assert parse(" 2309.06180v12 ") == ("2309.06180", 12)
    for bad in ["", "foo/bar", "2309.06180v0", "2309.061", "astro-ph/060100", "2309.06180v99999"]:
        with pytest.raises(ArxivIdError):
            parse(bad)

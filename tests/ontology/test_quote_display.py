"""Quotes are shown readable everywhere: a quote of table text is shown as its table row's sentence with the
table's page, and nothing shown (search, technique evidence, advisor evidence, the API) is soup."""
from __future__ import annotations

import pytest

from ontology.extraction.text import is_soup
from ontology.quotes import display_quote, readable_text
from papers.pdf.table_rows import table_rows
from papers.selectors import QuotedPage

# with the other corpus ingests on one worker: the second ingest of a text reads its embedding from the cache
pytestmark = pytest.mark.xdist_group("corpus-ingest")

# vLLM's Table 1 as the page's text layer reads it (p. 9 of 2309.06180): what a rule extractor once quoted.
TABLE_TEXT = "Model size 13B 66B 175B GPUs A100 4×A100 8×A100-80GB Total GPU memory 40 GB 160 GB"
ROW_13B = "Table 1 (p. 9), Model size 13B: GPUs A100; Total GPU memory 40 GB;"


def test_table_text_and_a_run_of_marks_are_soup_but_a_table_rows_sentence_is_not():
    assert is_soup(TABLE_TEXT)
    assert is_soup("Early Exiting - ✗ ✗ ✗ ✗ Vicuna (13B) 1.1× ~1.5×")
    assert not is_soup("Table 1 (p. 9), Model size 13B: GPUs A100; Total GPU memory 40 GB; Parameter size 26 GB")
    assert not is_soup("We try batch sizes of 32, 64, 128 and 256 in every configuration.")


def test_a_soup_quote_is_shown_as_the_row_holding_its_value_else_the_nearest_readable_sentence():
    cells = [["Model size", "13B", "66B"], ["GPUs", "A100", "4×A100"], ["Total GPU memory", "40 GB", "160 GB"]]
    page = QuotedPage(text=f"Table 1. Model sizes. {TABLE_TEXT} We run every model on the GPUs listed above.",
                      rows=table_rows(cells, 9, "Table 1. Model sizes."))
    assert display_quote(TABLE_TEXT, page, value="160") == "Table 1 (p. 9), Model size 66B: GPUs 4×A100; Total GPU memory 160 GB"
    assert display_quote(TABLE_TEXT, QuotedPage(text=page.text)) == "Model size … We run every model on the GPUs listed above."
    assert display_quote(TABLE_TEXT) is None
    assert display_quote("vLLM sets its default block size as 16", page) == "vLLM sets its default block size as 16"
    assert readable_text(f"Setup. {TABLE_TEXT} We use four GPUs.") == "Setup. Model size … We use four GPUs."


@pytest.mark.slow
@pytest.mark.django_db
def test_search_technique_and_advisor_evidence_over_an_ingested_paper_show_no_soup(corpus_dir, tmp_path, settings,
                                                                                   client, editor):
    from ontology.models import Fact
    from ontology.selectors import evidence_for, hybrid_search, technique_facts, technique_wiki
    from ontology.services import set_fact_techniques, store_facts
    from papers.services import ingest_pdf
    from papers.services.extraction import extract_paper

    settings.DATA_DIR = tmp_path
    paper = ingest_pdf(corpus_dir / "pdfs" / "2309.06180.pdf", arxiv_id="2309.06180")
    assert extract_paper(paper.pk, use_llm=False).status == "done"
    store_facts(paper, [{"kind": "parameter", "subject": "OPT-13B", "parameter": "gpu_memory_gb", "value": "40",
                         "unit": "GB", "condition": None, "effect": None, "page": 9, "quote": TABLE_TEXT,
                         "confidence": 0.7, "extractor": "rules"}])
    table_fact = Fact.objects.get(paper=paper, quote=TABLE_TEXT)
    set_fact_techniques(table_fact, editor, ["paged_kv_cache"])

    results = [r for q in ("GPU memory of OPT-13B", "paged KV cache block size", "memory for KV cache")
               for r in hybrid_search(q, limit=10)]
    evidence = technique_facts(["paged_kv_cache"])
    advisor = evidence_for("total GPU memory", parameters=["gpu_memory_gb", "block_size"], limit=10)
    wiki_quotes = [r["quote"] for p in technique_wiki("paged_kv_cache")["papers"] for r in p["facts"]]
    shown = [r["text"] for r in results] + [e["quote"] for e in evidence + advisor] + wiki_quotes
    assert results and evidence and advisor
    assert [text for text in shown if is_soup(text)] == []

    table_row = next(e["quote"] for e in evidence if e["fact_id"] == table_fact.pk)
    assert table_row.startswith(ROW_13B)
    assert any(e["quote"].startswith(ROW_13B) for e in advisor)
    api = client.get("/api/search", {"q": "GPU memory of OPT-13B", "type": "fact"}).json()["results"]
    row_hit = next(r for r in api if r.get("fact_id") == table_fact.pk)
    assert ROW_13B in row_hit["text"] and not is_soup(row_hit["text"])
    assert Fact.objects.get(pk=table_fact.pk).quote == TABLE_TEXT  # the stored quote stays verbatim

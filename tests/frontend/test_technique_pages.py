"""Technique pages, the editor's technique links on a fact page (a revision), diagnose in the browser UI,
and the saved setup that makes a paper page say whether the paper applies."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from ontology.models import FactRevision
from ontology.services import fact_technique_names, link_facts
from tests.frontend.data import password

pytestmark = pytest.mark.django_db


def _client(web, name: str | None = None) -> Client:
    client = Client()
    if name:
        assert client.login(username=name, password=password(name))
    return client


def test_a_technique_page_lists_the_papers_and_facts_linked_to_it_and_the_engine_flags(web):
    link_facts(list(web.facts.values()))
    page = _client(web).get("/techniques/chunked_prefill/")
    body = page.content.decode()
    assert page.status_code == 200 and "Chunked prefill" in body
    assert "arXiv:2403.02310" in body and "a chunk size of 512 tokens" in body
    assert "--enable-chunked-prefill" in body
    index = _client(web).get("/techniques/").content.decode()
    assert "/techniques/prefix_caching/" in index
    assert _client(web).get("/techniques/warp_drive/").status_code == 404


def test_an_editor_sets_a_facts_techniques_and_the_history_shows_it_an_outsider_cannot(web):
    fact = web.facts["block_size"]
    link_facts([fact])
    outsider = _client(web, "outsider").post(f"/facts/{fact.pk}/techniques/", {"technique": ["prefix_caching"]})
    assert outsider.status_code == 403 and fact_technique_names(fact) == ["paged_kv_cache"]
    editor = _client(web, "editor")
    done = editor.post(f"/facts/{fact.pk}/techniques/", {"technique": ["paged_kv_cache", "prefix_caching"],
                                                        "note": "blocks are shared between prefixes"})
    assert done.status_code == 302
    assert fact_technique_names(fact) == ["paged_kv_cache", "prefix_caching"]
    revision = FactRevision.objects.get(fact=fact, action="techniques")
    assert revision.user.username == "editor"
    history = editor.get(f"/facts/{fact.pk}/").content.decode()
    assert "techniques changed" in history and "blocks are shared between prefixes" in history


def test_the_diagnose_page_answers_and_says_when_it_cannot(web):
    link_facts(list(web.facts.values()))
    answered = _client(web).get("/diagnose/", {"q": "long prompts make decode latency spike"}).content.decode()
    assert "Chunked prefill" in answered and "--enable-chunked-prefill" in answered
    refused = _client(web).get("/diagnose/", {"q": "my printer keeps jamming"}).content.decode()
    assert "does not match any serving symptom" in refused
    assert "the engine version" in refused and "the GPU model" in refused, "it says what to send instead"
    assert '<a href="/techniques/">' in refused, "the techniques it knows are a link, not a bare path"
    assert 'class="message warning"' in refused, "styled as a warning (the stylesheet has no .warn)"


KV_ERROR = ("ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be "
            "stored in KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.")


def test_a_diagnosed_error_names_the_engine_as_people_write_it_not_by_its_catalog_id(web):
    answered = _client(web).post("/diagnose/", {"q": KV_ERROR}).content.decode()
    assert "Recognised: vLLM" in " ".join(answered.split())
    assert "<li>vLLM: lower <code>--max-model-len 3664</code>" in answered
    assert "(vllm)" not in answered and "<li>vllm:" not in answered


def test_a_saved_setup_makes_the_paper_page_compare_environments(web):
    paper = web.papers["vllm"]
    paper.environment = {"gpus": [{"model": "A100", "memory_gb": 80, "count": 1}], "gpu_models": ["A100"],
                         "cuda": ["12.1"], "engines": [{"name": "vLLM", "version": None}]}
    paper.save()
    client = _client(web)
    before = client.get("/papers/2309.06180/").content.decode()
    assert "Save your setup to compare it" in before
    saved = client.post("/setup/", {"gpu": "L4", "gpu_count": "1", "cuda": "12.4", "engine": "vllm",
                                    "engine_version": "0.6.3", "next": "/papers/2309.06180/"})
    assert saved.status_code == 302 and saved["Location"] == "/papers/2309.06180/#applies"
    after = client.get("/papers/2309.06180/").content.decode()
    assert "Your setup differs in GPU, GPU memory" in after and "NVIDIA L4" in after
    bad = client.post("/setup/", {"gpu": "L4", "gpu_count": "0", "cuda": "twelve", "next": "/papers/2309.06180/"})
    assert bad.status_code == 302
    shown = client.get("/papers/2309.06180/").content.decode()
    assert "write the CUDA version as major.minor" in shown
    client.post("/setup/", {"clear": "1", "next": "/papers/2309.06180/"})
    assert "Save your setup to compare it" in client.get("/papers/2309.06180/").content.decode()


def test_a_signed_in_persons_setup_follows_them_to_another_browser_and_signing_out_keeps_it(web):
    name = next(iter(web.users))
    laptop, phone = _client(web, name), _client(web, name)
    laptop.post("/setup/", {"gpu": "L4", "gpu_count": "2", "cuda": "12.4", "next": "/papers/2309.06180/"})
    assert "NVIDIA L4" in phone.get("/papers/2309.06180/").content.decode()
    laptop.logout()
    assert "Save your setup to compare it" in laptop.get("/papers/2309.06180/").content.decode()
    assert "NVIDIA L4" in _client(web, name).get("/papers/2309.06180/").content.decode()
    phone.post("/setup/", {"clear": "1", "next": "/papers/2309.06180/"})
    assert "Save your setup to compare it" in _client(web, name).get("/papers/2309.06180/").content.decode()


def test_a_technique_page_says_which_papers_introduce_or_evaluate_it_and_the_trade_offs_they_report(web):
    from ontology.services import store_facts
    from papers.models import Paper

    base = {"kind": "trade_off", "subject": "X", "parameter": "chunk_size", "value": None, "unit": None,
            "page": 3, "confidence": 0.7, "extractor": "rules"}
    own = Paper.objects.create(arxiv_id="2401.00021", title="A chunking system")
    store_facts(own, [
        {**base, "condition": "prompts longer than 4K tokens", "effect": "bounded decode stalls at a small prefill cost",
         "quote": "We propose chunked prefills that split a long prompt across iterations."},
        {**base, "page": 5, "condition": None, "effect": "flat time between tokens at a small throughput cost",
         "quote": "Chunked prefills keep the time between tokens flat under load."},
        {**base, "page": 7, "parameter": "max_num_batched_tokens", "condition": None,
         "effect": "bounded decode stalls at a small prefill cost",  # the same finding stated for another knob
         "quote": "Chunked prefills bound decode stalls at a small prefill cost."},
    ])
    other = Paper.objects.create(arxiv_id="2401.00022", title="A comparison")
    store_facts(other, [
        {**base, "condition": None, "effect": "higher TTFT with small chunks",
         "quote": "Chunked prefills with a small chunk size raise the time to first token."},
        {**base, "page": 6, "condition": None, "effect": "no decode waits, at a small prefill cost",
         "quote": "With chunked prefills the decode batch never waits for a long prompt."},
    ])
    body = _client(web).get("/techniques/chunked_prefill/").content.decode()
    assert body.index("arXiv:2401.00021") < body.index("arXiv:2401.00022")  # the paper that introduces it first
    own_card = body[body.index("arXiv:2401.00021"):body.index("arXiv:2401.00022")]
    assert "introduces it" in own_card and "Reported trade-offs" in own_card
    assert "bounded decode stalls at a small prefill cost" in own_card and "when prompts longer than 4K tokens" in own_card
    assert own_card.count("bounded decode stalls at a small prefill cost") == 1
    other_card = body[body.index("arXiv:2401.00022"):]
    assert "evaluates it" in other_card.split("</section>")[0] and "higher TTFT with small chunks" in other_card


def test_pages_show_a_quote_without_its_figure_text_and_never_show_table_soup(web):
    from ontology.models import Fact
    from ontology.services import store_facts

    paper = web.facts["block_size"].paper
    prose = "vLLM keeps the KV cache in fixed-size blocks of 16 tokens"
    cells = "Model size 13B 66B 175B GPUs A100 4×A100 8×A100-80GB Total GPU memory 40 GB 160 GB"
    store_facts(paper, [{"kind": "parameter", "subject": "vLLM", "parameter": "block_size", "value": "16",
                         "unit": "tokens", "condition": None, "effect": None, "page": 5, "confidence": 0.6,
                         "quote": f"{prose} 0 50 100 150 200 250", "extractor": "rules"},
                        {"kind": "parameter", "subject": "OPT-13B", "parameter": "gpu_memory_gb", "value": "40",
                         "unit": "GB", "condition": None, "effect": None, "page": 9, "confidence": 0.6,
                         "quote": cells, "extractor": "rules"}])
    figure = Fact.objects.get(paper=paper, parameter="block_size", page=5)
    table = Fact.objects.get(paper=paper, quote=cells)
    quoted = re.compile(r'<blockquote class="quote[^"]*">(.*?)</blockquote>', re.DOTALL)
    shown = quoted.findall(_client(web).get(f"/facts/{figure.pk}/").content.decode())  # history keeps the record
    assert shown == [f"{prose} …"]
    listed = " ".join(quoted.findall(_client(web).get(f"/papers/{paper.arxiv_id}/").content.decode()))
    assert prose in listed and "150 200 250" not in listed and "175B GPUs A100" not in listed
    assert quoted.findall(_client(web).get(f"/facts/{table.pk}/").content.decode()) == [
        '<span class="muted">Table or figure text: see p.9 of the PDF.</span>']
    api = _client(web).get(f"/api/facts/{table.pk}/").json()
    assert api["quote"] == cells and api["shown_quote"] is None

"""The advisor form and its result page: command, memory chart, latency bars, rejected options, errors."""
import re

import pytest

pytestmark = pytest.mark.django_db
QUERY = {"gpu": "A100-SXM4-40GB", "gpu_count": "1", "cuda": "12.1", "model": "meta-llama/Llama-3.1-8B-Instruct",
         "prompt_tokens": "1024", "output_tokens": "256", "concurrency": "16", "p95_latency_ms": "5000"}


def test_the_form_labels_every_field(client):
    html = client.get("/advisor/").content.decode()
    for name in QUERY:
        assert re.search(rf'<label for="id_{name}"( class="required")?>', html), name
        assert f'id="id_{name}"' in html


def test_a_result_has_a_copyable_command_and_a_memory_chart_with_its_numbers(client):
    response = client.get("/advisor/result/", QUERY)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="command"' in html and 'data-copy="command-1"' in html
    assert html.count('class="mem-segment"') >= 2  # weights and KV cache at least
    assert re.search(r"<th scope=\"row\">weights</th><td class=\"num\">\d", html)
    assert 'class="latency-bar"' in html and "p95" in html
    assert "out of 40 GiB" in html


def test_an_impossible_request_explains_itself(client):
    response = client.get("/advisor/result/", {**QUERY, "gpu": "T4", "model": "meta-llama/Llama-3.1-70B-Instruct"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "Options ruled out" in html or "Nothing fits" in html


def test_an_unknown_gpu_comes_back_to_the_form_with_the_advisors_hint(client):
    response = client.get("/advisor/result/", {**QUERY, "gpu": "Potato 9000"})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'role="alert"' in html and "Potato 9000" in html
    assert 'value="meta-llama/Llama-3.1-8B-Instruct"' in html, "the form keeps what was typed"


def test_a_missing_required_field_is_reported_next_to_it(client):
    response = client.get("/advisor/result/", {**QUERY, "model": ""})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


def test_a_page_where_no_option_meets_the_sla_says_so_instead_of_success(client):
    response = client.get("/advisor/result/", {**QUERY, "p95_latency_ms": "", "p95_ttft_ms": "20"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "A setup that" not in html and 'class="message success' not in html
    assert "No option meets the SLA" in html and "% over the 20 ms target" in html
    assert "Closest:" in html and "Best:" not in html
    assert "Arrivals behind these percentiles: closed loop: 16 concurrent users" in html


def test_a_page_that_meets_the_sla_says_so(client):
    html = client.get("/advisor/result/", {**QUERY, "p95_latency_ms": "600000"}).content.decode()
    assert "A setup that meets the SLA was found." in html and "Best:" in html


def test_the_result_shows_each_technique_on_or_off_with_the_quotes_behind_it(client):
    from ontology.services import store_facts
    from papers.models import Paper

    paper = Paper.objects.create(arxiv_id="2401.00031", title="A chunking paper")
    quotes = ["Chunked prefills keep the time between tokens flat for 4K-token prompts on an L4 GPU.",
              "With chunked prefills a long prompt never stalls the decodes of a 7B model."]
    store_facts(paper, [{"kind": "trade_off", "subject": "X", "parameter": "chunk_size", "value": None, "unit": None,
                         "condition": None, "effect": "flat time between tokens at a small prefill cost",
                         "page": 4 + n, "confidence": 0.7, "extractor": "rules", "quote": quote}
                        for n, quote in enumerate(quotes)])
    html = client.get("/advisor/result/", {"gpu": "L4", "gpu_count": "1", "model": "Qwen/Qwen2.5-7B-Instruct",
                                           "prompt_tokens": "4096", "output_tokens": "256", "concurrency": "8",
                                           "p95_tpot_ms": "80"}).content.decode()
    items = []  # (badge, text) of each recommendation's chunked-prefill line
    for match in re.finditer(r'<li><span class="badge[^"]*">(on|off|suggested)</span>\s*<a href="/techniques/chunked_prefill/"'
                             r"(.*?)</li>", html, re.DOTALL):
        items.append((match.group(1), match.group(2)))
    assert items and any(badge == "on" for badge, _ in items)  # long prompts under a TPOT SLA turn it on
    shown = [text for badge, text in items if badge == "on"][0]
    assert any(quote in shown for quote in quotes) and "arXiv:2401.00031" in shown
    assert re.search(r"p\.[45]\b", shown)


def test_an_unknown_model_error_names_the_forms_fields_not_the_apis_keys(client, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there: the Hub is unreachable
    response = client.get("/advisor/result/", {**QUERY, "model": "acme/private-4b"})
    assert response.status_code == 400
    alert = re.search(r'role="alert">(.*?)</div>', response.content.decode(), re.S).group(1)
    assert "in the “Model” field" in alert and "in the “Model config.json” field" in alert
    assert '"model_config"' not in alert and "&quot;model&quot;" not in alert


def test_the_command_wraps_between_words_only_and_the_engine_is_named_as_people_write_it(client):
    from advisor.profiles import profiles

    html = client.get("/advisor/result/", QUERY).content.decode()
    pre = re.search(r'<pre id="command-1" class="command">(.*?)</pre>', html, re.S).group(1)
    words = re.findall(r'<span class="nowrap">(.*?)</span>', pre)
    assert re.sub(r"<[^>]+>", "", pre) == " ".join(words), "the spans add no text: a copy is the command"
    assert any(w.startswith("--") for w in words), "a flag is one word that never breaks after its first hyphen"
    engine = re.search(r'<h2 id="rec-1">(?:Best|Closest): (\S+)', html).group(1)
    assert engine in {p.name for p in profiles().values()}, engine


def _bundled_config(name: str) -> str:
    """A real config.json the aiconfigurator bundle ships (its own copy of the model's Hugging Face file)."""
    from importlib import util
    from pathlib import Path

    spec = util.find_spec("aiconfigurator_core")
    assert spec is not None and spec.submodule_search_locations
    return (Path(next(iter(spec.submodule_search_locations))) / "model_configs" / name).read_text()


def test_the_form_posts_and_a_result_without_a_pasted_config_gets_a_shareable_address(client):
    form = client.get("/advisor/").content.decode()
    assert re.search(r'<form method="post" action="/advisor/result/"', form)
    response = client.post("/advisor/result/", QUERY)
    assert response.status_code == 302
    shared = client.get(response["Location"])
    assert shared.status_code == 200 and "Recommendation" in shared.content.decode()
    assert "csrfmiddlewaretoken" not in response["Location"]
    reopened = client.get("/advisor/?" + response["Location"].split("?", 1)[1]).content.decode()
    assert 'value="meta-llama/Llama-3.1-8B-Instruct"' in reopened, "Change the inputs keeps what was typed"


def test_a_pasted_config_too_long_for_a_url_is_answered_on_the_post(client, monkeypatch):
    from urllib.parse import urlencode

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    config = _bundled_config("Qwen--Qwen3-30B-A3B-FP8_config.json")
    assert len(urlencode({"model_config": config})) > 8190, "longer than any request line gunicorn accepts"
    response = client.post("/advisor/result/", {**QUERY, "gpu": "H100-SXM5-80GB", "model": "acme/private-30b",
                                                 "model_config": config})
    html = response.content.decode()
    assert response.status_code == 200, html[:2000]
    assert "<h1>Recommendation</h1>" in html and "paste the config.json again" in html

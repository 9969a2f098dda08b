"""Re-extraction merges instead of deleting: an unreviewed fact a new reading no longer finds is marked
superseded, listed on its paper's page and through the API, and left out of live evidence (search,
wiki pages, the advisor's evidence) until a person verifies it or a later reading finds it again."""
import pytest

from ontology import selectors
from ontology.models import Fact
from ontology.services import store_facts, verify_fact
from tests.frontend.conftest import web_indexed  # noqa: F401  (fixture)
from tests.frontend.data import password

pytestmark = pytest.mark.django_db

NEW_READING = [{"kind": "constraint", "subject": "vLLM", "parameter": "gpu", "value": "A100", "unit": None,
                "condition": None, "effect": None, "page": 8, "quote": "We evaluate vLLM on NVIDIA A100 GPUs",
                "confidence": 0.5, "extractor": "rules"}]


def _search_fact_ids(client, query: str) -> set[int]:
    return {r.get("fact_id") for r in client.get("/api/search", {"q": query, "type": "fact"}).json()["results"]}


def test_a_fact_the_new_reading_no_longer_finds_is_superseded_listed_and_not_live(client, web_indexed):  # noqa: F811
    block = web_indexed.facts["block_size"]
    assert block.id in _search_fact_ids(client, "KV cache block size")
    counts = store_facts(web_indexed.papers["vllm"], NEW_READING)
    assert counts["superseded"] >= 1
    assert Fact.objects.get(id=block.id).status == "superseded"

    listed = client.get("/api/facts/", {"status": "superseded", "paper": "2309.06180"}).json()["results"]
    assert block.id in {f["id"] for f in listed}
    html = client.get("/papers/2309.06180/").content.decode()
    assert "No longer found by the latest extraction" in html
    assert html.index("No longer found") < html.index("we set the block size to 16 tokens")

    assert block.id not in _search_fact_ids(client, "KV cache block size")
    assert block.id not in {e["fact_id"] for e in selectors.evidence_for("block size", parameters=["block_size"])}
    assert "block_size" not in {p["parameter"] for p in client.get("/api/parameters/").json()["results"]}
    assert "we set the block size" not in client.get("/entities/vllm/").content.decode()


def test_a_superseded_fact_a_person_verifies_is_live_evidence_again(client, web_indexed):  # noqa: F811
    block = web_indexed.facts["block_size"]
    store_facts(web_indexed.papers["vllm"], NEW_READING)
    assert client.login(username="editor", password=password("editor"))
    client.post(f"/facts/{block.id}/verify/")
    assert Fact.objects.get(id=block.id).status == "verified"
    assert block.id in _search_fact_ids(client, "KV cache block size")
    assert block.id in {e["fact_id"] for e in selectors.evidence_for("block size", parameters=["block_size"])}


def test_a_verified_fact_the_new_reading_no_longer_finds_stays_verified_and_live(web_indexed):  # noqa: F811
    gpu_free = web_indexed.facts["hostile"]
    verify_fact(gpu_free, web_indexed.users["editor"])
    store_facts(web_indexed.papers["vllm"], NEW_READING)
    assert Fact.objects.get(id=gpu_free.id).status == "verified"
    assert gpu_free.id in {f.id for f in selectors.facts_for_paper(web_indexed.papers["vllm"].id)}

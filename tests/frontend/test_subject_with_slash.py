"""A fact subject with a `/` ("vLLM/SGLang") must never break a page: the subject's entity key goes
into links (/entities/<key>/, /api/entities/<key>/), so a slash in it must round-trip."""
import pytest

from ontology import services
from tests.frontend.data import password, token_client

pytestmark = pytest.mark.django_db


def _slashed(web):
    """The block-size fact, edited by an editor to be about "vLLM/SGLang"."""
    fact = web.facts["block_size"]
    services.edit_fact(fact, web.users["editor"], {"subject": "vLLM/SGLang"})
    return fact


def test_the_paper_page_and_the_review_queue_answer_when_a_subject_holds_a_slash(client, web):
    _slashed(web)
    assert client.login(username="editor", password=password("editor"))
    paper = client.get("/papers/2309.06180/")
    assert paper.status_code == 200
    assert 'href="/entities/vllm/sglang/"' in paper.content.decode()
    services.edit_fact(web.facts["gpu"], web.users["editor"], {"subject": "TensorRT-LLM/Triton"})
    services.verify_fact(web.facts["hostile"], web.users["editor"])
    queue = client.get("/review/?status=verified")
    assert queue.status_code == 200
    assert 'href="/entities/tensorrt-llm/triton/"' in queue.content.decode()


def test_the_entity_page_of_a_subject_with_a_slash_opens_in_the_browser_and_the_api(client, web):
    fact = _slashed(web)
    page = client.get("/entities/vllm/sglang/")
    assert page.status_code == 200 and "we set the block size to 16 tokens" in page.content.decode()
    body = token_client(web.users["outsider"]).get("/api/entities/vllm/sglang/").json()
    assert body["entity"]["name"] == "vLLM/SGLang"
    assert [f["id"] for f in body["facts"]] == [fact.id]

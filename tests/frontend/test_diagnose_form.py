"""The diagnose form posts, so an error message as long as the form allows (2,000 characters) fits.

Found in review: the form was a GET, and a pasted traceback over about 1,300 characters, once
escaped into the URL, was refused by the web server (414 URI Too Long). A GET with ?q= still works,
for short links people share.
"""
from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from django.test import Client

from advisor.diagnose import MAX_QUERY_CHARS
from tests.frontend.conftest import web  # noqa: F401  (fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("web")]

FRAME = '  File "/usr/lib/python3/site-packages/vllm/worker/model_runner.py", line 1234, in execute_model\n'
TRACEBACK = ("Traceback (most recent call last):\n" + FRAME * 17 +
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
             "capacity; 76.90 GiB already allocated; 1.02 GiB free) with many concurrent requests")


def test_the_form_posts_with_a_csrf_token():
    page = Client().get("/diagnose/").content.decode()
    form = re.search(r"<form[^>]*>.*?</form>", page, re.S).group(0)
    assert 'method="post"' in form and 'name="csrfmiddlewaretoken"' in form


def test_a_pasted_error_as_long_as_the_form_allows_is_answered():
    assert len(urlencode({"q": TRACEBACK})) > 1300 and len(TRACEBACK) <= MAX_QUERY_CHARS
    client = Client(enforce_csrf_checks=True)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get("/diagnose/").content.decode())
    answer = client.post("/diagnose/", {"q": TRACEBACK, "csrfmiddlewaretoken": token.group(1)})
    assert answer.status_code == 200
    body = answer.content.decode()
    assert 'role="status"' in body and "CUDA out of memory. Tried to allocate" in body


def test_a_shared_link_with_q_still_answers():
    body = Client().get("/diagnose/", {"q": "long prompts make decode latency spike"}).content.decode()
    assert 'role="status"' in body and "long prompts make decode latency spike" in body


def test_a_post_without_the_csrf_token_is_refused():
    assert Client(enforce_csrf_checks=True).post("/diagnose/", {"q": "out of memory"}).status_code == 403


def test_a_container_option_is_shown_as_one_and_an_upgrade_without_a_release_names_none():
    body = Client().get("/diagnose/?" + urlencode({"q": "Error: Download process was signaled to shutdown with signal 7"}))
    text = body.content.decode()
    assert "--shm-size 1g</code>" in text and "(docker run option)" in text
    crash = ("[TensorRT-LLM][ERROR] Assertion failed: d == a + length "
             "(/app/tensorrt_llm/cpp/tensorrt_llm/kernels/someKernel.cu:326)\nSegmentation fault (core dumped)")
    text = Client().get("/diagnose/?" + urlencode({"q": crash})).content.decode()
    # a release move reads as one ("upgrade", "downgrade to <release>"), never as a flag named "upgrade"
    assert re.search(r"TensorRT-LLM: upgrade(?! to )", text) and "<code>upgrade</code>" not in text, text[:2000]


def test_a_regression_shows_the_release_that_worked_to_go_back_to():
    text = ("broken version: 9426 (1738129) / last known good version: 9246 (871b0b7); cudaMalloc failed: out of "
            "memory / failed to allocate compute pp buffers")
    page = Client().get("/diagnose/?" + urlencode({"q": text})).content.decode()
    assert "It broke with an update" in page
    assert re.search(r"llama\.cpp: downgrade to <code>9246</code>", page), page[:2000]


def test_a_package_move_names_the_package_it_moves():
    text = "ImportError: vllm>=0.4.3,<=0.6.2 is required for a normal functioning of this module, but found vllm==0.6.3."
    page = Client().get("/diagnose/?" + urlencode({"q": text})).content.decode()
    assert re.search(r"vLLM: downgrade vllm to <code>0\.6\.2</code>", page), page[:2000]
    assert "vLLM: upgrade the package that requires vllm" in page

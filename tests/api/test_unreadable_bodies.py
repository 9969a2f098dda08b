"""A body the API cannot read is a 400 in the API's error shape, never a server error or an HTML page.

Found on /api/diagnose: a NUL in a multipart form, a NUL sent as `Content-Type: */*` and a lone UTF-16
surrogate in JSON reached the database or the tokenizer (500); a form body declared as Latin-1 got
Django's HTML 400. The same parsers serve every API view, so the token endpoint is checked as well.
"""
from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

MULTIPART = "multipart/form-data; boundary=XX"


def _multipart(value: bytes) -> bytes:
    return b'--XX\r\nContent-Disposition: form-data; name="query"\r\n\r\n' + value + b"\r\n--XX--\r\n"


BODIES = [
    pytest.param(MULTIPART, _multipart(b"CUDA out of memory\x00"), "NUL", id="nul-in-multipart"),
    pytest.param("*/*", b'{"query": "out of memory\\u0000"}', "names no media type", id="wildcard-content-type"),
    pytest.param("application/*", b'{"query": "oom"}', "names no media type", id="wildcard-subtype"),
    pytest.param("application/json", b'{"query": "\\ud800"}', "surrogate", id="lone-surrogate-value"),
    pytest.param("application/json", b'{"\\udfff": "oom"}', "surrogate", id="lone-surrogate-key"),
    pytest.param("application/x-www-form-urlencoded; charset=latin-1", b"query=\xff\xfe", "UTF-8",
                 id="latin-1-form"),
    pytest.param("application/x-www-form-urlencoded", b"query=\xff\xfe", "not valid utf-8", id="non-utf8-form"),
    pytest.param("application/json", b'{"query": "\xff"}', "utf-8", id="non-utf8-json"),
]


@pytest.mark.parametrize(("content_type", "body", "says"), BODIES)
def test_diagnose_answers_an_unreadable_body_with_a_json_400(content_type, body, says):
    response = Client().generic("POST", "/api/diagnose", body, content_type=content_type)
    assert response.status_code == 400, response.content[:200]
    assert response["Content-Type"].startswith("application/json")
    document = response.json()
    assert document["error"] == "malformed request" and set(document) <= {"error", "detail", "hint"}
    assert says.lower() in str(document["detail"]).lower()


@pytest.mark.parametrize(("content_type", "body"), [
    (MULTIPART, b'--XX\r\nContent-Disposition: form-data; name="username"\r\n\r\n\xed\xa0\x80\x00\r\n--XX--\r\n'),
    ("application/json", b'{"username": "\\ud800", "password": "x"}'),
])
def test_the_token_endpoint_refuses_the_same_bodies(content_type, body):
    response = Client().generic("POST", "/api/auth/token/", body, content_type=content_type)
    assert response.status_code == 400 and response.json()["error"] == "malformed request"


def test_readable_bodies_of_each_kind_still_reach_the_view():
    client = Client()
    as_json = client.post("/api/diagnose", {"query": "out of memory"}, content_type="application/json")
    as_form = client.generic("POST", "/api/diagnose", b"query=out+of+memory",
                             content_type="application/x-www-form-urlencoded")
    as_multipart = client.generic("POST", "/api/diagnose", _multipart("out of memory ✓".encode()),
                                  content_type=MULTIPART)
    assert [r.status_code for r in (as_json, as_form, as_multipart)] == [200, 200, 200]
    assert as_multipart.json()["query"] == "out of memory ✓"

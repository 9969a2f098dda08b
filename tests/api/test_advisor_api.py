"""POST /api/advisor/recommend over HTTP: the advisor's answer, and its input errors in the API's shape."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
BODY = {"gpu": "A100-SXM4-40GB", "model": "meta-llama/Llama-3.1-8B-Instruct", "cuda": "12.1",
        "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16}, "sla": {"p95_latency_ms": 5000}}


def test_a_recommendation_has_a_command_and_estimates():
    response = APIClient().post("/api/advisor/recommend", BODY, format="json")
    assert response.status_code == 200
    best = response.json()["recommendations"][0]
    assert best["command"] and best["estimates"]["weights_gib"] > 0


def test_invalid_advisor_input_is_a_400_with_error_and_hint():
    response = APIClient().post("/api/advisor/recommend", {**BODY, "gpu": "Potato 9000"}, format="json")
    assert response.status_code == 400
    assert "Potato 9000" in response.json()["error"] and response.json()["hint"]


def test_a_body_that_is_not_json_is_a_400_saying_so():
    response = APIClient().post("/api/advisor/recommend", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "malformed request"


def test_a_body_over_the_limit_is_a_413_in_the_api_shape_before_anything_reads_it():
    body = json.dumps({**BODY, "pad": "x" * 3_000_000})
    response = APIClient().post("/api/advisor/recommend", body, content_type="application/json")
    assert response.status_code == 413 and response.json()["error"] == "request body too large"
    assert "at most 1,048,576" in response.json()["hint"]
    page = Client().post("/digest/", "email=" + "x" * 2_000_000, content_type="application/x-www-form-urlencoded")
    assert page.status_code == 413 and b"Request too large" in page.content


def test_a_pdf_upload_may_be_larger_than_a_form_but_not_than_the_pdf_limit(settings):
    settings.PDF_MAX_BYTES = 10_000
    fits = Client().post("/upload/", {"pdf": SimpleUploadedFile("a.pdf", b"%PDF-" + b"0" * 5_000)})
    assert fits.status_code != 413
    over = Client().post("/upload/", {"pdf": SimpleUploadedFile("a.pdf", b"%PDF-" + b"0" * 1_100_000)})
    assert over.status_code == 413

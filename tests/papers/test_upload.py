"""/upload/: editors bring a PDF from the browser (the import_pdfs service); others cannot."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from papers.models import Paper
from tests.papers.pdfs import SERVING_TEXT, text_pdf


@pytest.fixture
def pdf_bytes(tmp_path) -> bytes:
    return text_pdf(tmp_path / "2401.00021.pdf", SERVING_TEXT, title="Sys: fast serving",
                    stamp="arXiv:2401.00021v1  [cs.DC]  1 Jan 2024").read_bytes()


def test_anonymous_users_are_sent_to_log_in_and_outsiders_refused(db, pdf_bytes) -> None:
    response = Client().post("/upload/", {"pdf": SimpleUploadedFile("a.pdf", pdf_bytes)})
    assert response.status_code == 302 and "/login/" in response["Location"]
    outsider = Client()
    outsider.force_login(User.objects.create_user("outsider", password="pw-outsider-1"))
    assert outsider.get("/upload/").status_code == 403
    assert outsider.post("/upload/", {"pdf": SimpleUploadedFile("a.pdf", pdf_bytes)}).status_code == 403
    assert not Paper.objects.exists()


def test_an_editors_pdf_is_stored_searchable_and_queued_for_extraction(editor, pdf_bytes, data_dir,
                                                                        memory_broker) -> None:
    assert editor.get("/upload/").status_code == 200
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("2401.00021.pdf", pdf_bytes)})
    assert response.status_code == 302 and response["Location"] == "/papers/2401.00021/"
    paper = Paper.objects.get(arxiv_id="2401.00021")
    assert paper.status == Paper.Status.PARSED and paper.pages.count() == 1
    with memory_broker.connection_for_write() as conn:
        assert conn.SimpleQueue("extract").get(block=False).headers["task"] == "papers.tasks.extract_paper_task"
    assert not list((data_dir / "uploads").iterdir())  # the spooled upload is gone
    again = editor.post("/upload/", {"pdf": SimpleUploadedFile("copy.pdf", pdf_bytes)})
    assert again["Location"] == "/papers/2401.00021/" and Paper.objects.count() == 1


def test_a_non_pdf_and_an_oversized_file_are_refused_with_the_reason(editor, data_dir, settings) -> None:
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("a.pdf", b"<html>captcha</html>")})
    assert response.status_code == 400 and "not a PDF" in response.content.decode()
    settings.PDF_MAX_BYTES = 2048
    response = editor.post("/upload/", {"pdf": SimpleUploadedFile("big.pdf", b"%PDF-1.4\n" + b"0" * 4096)})
    assert response.status_code == 400 and "the limit is 2,048" in response.content.decode()
    assert not Paper.objects.exists()


def test_a_web_process_that_never_imported_the_tasks_still_queues_the_extraction(redis_url: str) -> None:
    """The upload form runs in a web worker, which imports the URLs, never papers.tasks; the queued
    extraction must not depend on the task registry an import would have filled."""
    import json
    import os
    import subprocess
    import sys
    import uuid

    from tests.conftest import ROOT

    script = """
import json, sys, django
django.setup()
import infrawiki.urls  # what a web worker loads
from celery import current_app
from papers.services import queue_extraction
current_app.conf.broker_transport_options = {"global_keyprefix": sys.argv[1]}  # this test's own keys
assert "papers.tasks" not in sys.modules
queued = queue_extraction(7)
with current_app.connection_for_write() as conn:
    message = conn.SimpleQueue("extract").get(block=False)
print(json.dumps({"queued": queued, "task": message.headers["task"], "args": message.headers["argsrepr"]}))
"""
    import redis

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "infrawiki.settings", "CELERY_BROKER_URL": redis_url}
    prefix = f"test-{uuid.uuid4().hex[:8]}-"
    try:
        done = subprocess.run([sys.executable, "-c", script, prefix], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)
    finally:
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"queued": True, "task": "papers.tasks.extract_paper_task", "args": "[7]"}

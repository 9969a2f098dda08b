"""Fixtures of the papers tests: every corpus PDF parsed once per session, and the replay servers."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from infrawiki.permissions import EDITORS_GROUP
from papers.pdf import ParsedPdf, parse_pdf
from tests.papers.replay import ArxivReplay, GithubReplay


@pytest.fixture(scope="session")
def corpus_pdfs(corpus_dir: Path) -> dict[str, Path]:
    return {path.stem: path for path in sorted((corpus_dir / "pdfs").glob("*.pdf"))}


@pytest.fixture(scope="session")
def parsed_corpus(corpus_pdfs: dict[str, Path]) -> dict[str, ParsedPdf]:
    """Each corpus PDF parsed once for the whole session (parsing is the slow part)."""
    return {arxiv_id: parse_pdf(path) for arxiv_id, path in corpus_pdfs.items()}


@pytest.fixture
def arxiv_replay(corpus_dir: Path) -> Iterator[ArxivReplay]:
    with ArxivReplay(corpus_dir / "arxiv_atom" / "arxiv_py_2026_recorded") as server:
        yield server


@pytest.fixture
def github_replay(corpus_dir: Path, settings) -> Iterator[GithubReplay]:
    with GithubReplay(corpus_dir / "github_api" / "pygithub_replaydata") as server:
        settings.GITHUB_API_URL = server.url
        yield server


@pytest.fixture
def data_dir(tmp_path: Path, settings) -> Path:
    """A fresh DATA_DIR, so stored PDFs of one test never leak into another."""
    settings.DATA_DIR = tmp_path / "data"
    return settings.DATA_DIR


@pytest.fixture
def memory_broker() -> Iterator[object]:
    """Publish to kombu's in-memory transport, so eager tests never write to a real broker; yields
    the Celery app so a test can read what was sent."""
    from infrawiki.celery import app
    from tests.conftest import switch_broker

    saved = (app.conf.broker_url, app.conf.broker_transport_options, app.conf.result_backend)
    switch_broker(app, "memory://", {}, None)
    # the in-memory transport is one per process: drop what earlier tests left on its queues
    with app.connection_for_write() as conn:
        for queue in ("crawl", "parse", "extract", "digest"):
            conn.SimpleQueue(queue).clear()
    try:
        yield app
    finally:
        switch_broker(app, *saved)


def editor_client(name: str = "editor") -> Client:
    """A test client signed in as a member of the editors group (the account is made on first use)."""
    user, created = User.objects.get_or_create(username=name)
    if created:
        user.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def editor(db) -> Client:
    return editor_client()

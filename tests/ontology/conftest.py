"""Fixtures of the ontology tests: papers to hang facts on, people who review them."""
from __future__ import annotations

import pytest


@pytest.fixture
def paper(db):
    from papers.models import Paper

    return Paper.objects.create(arxiv_id="2309.06180", title="Efficient Memory Management for LLM Serving")


@pytest.fixture
def other_paper(db):
    from papers.models import Paper

    return Paper.objects.create(arxiv_id="2403.02310", title="Taming Throughput-Latency Tradeoff")


@pytest.fixture
def editor(django_user_model):
    return django_user_model.objects.create_user("editor", password="pw-editor-123")


def make_fact(**change) -> dict:
    """A fact dict as the extractors produce it."""
    base = {"kind": "parameter", "subject": "vLLM", "parameter": "block_size", "value": "16", "unit": "tokens",
            "condition": None, "effect": None, "page": 12, "quote": "vLLM sets its default block size as 16",
            "confidence": 0.8, "extractor": "rules"}
    return {**base, **change}

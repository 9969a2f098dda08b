"""Advisor tests never reach the real Hugging Face Hub: HF_ENDPOINT points at a closed loopback port
(an offline Hub) unless a test starts the replay server of test_hub.py."""
from __future__ import annotations

import pytest

CLOSED_PORT_URL = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def offline_hub(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", CLOSED_PORT_URL)
    monkeypatch.delenv("HF_TOKEN", raising=False)

"""The fuzz harness's bookkeeping: cases tried per surface (printed at the end of the run), generous
throttle rates (the harness is one client sending hundreds of requests), a case time budget."""
from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.papers.conftest import github_replay  # noqa: F401  (fixture for the GitHub answers)

CASES: Counter[str] = Counter()
CASE_BUDGET_S = 30  # one case longer than this is a hang


def tried(surface: str, count: int = 1) -> None:
    CASES[surface] += count


@contextmanager
def time_limit(what: str, seconds: int = CASE_BUDGET_S) -> Iterator[None]:
    """Fail (not hang) when one fuzz case runs longer than `seconds`."""

    def expired(*_):
        raise TimeoutError(f"{what} ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session", autouse=True)
def warm_embedding_model() -> None:
    """Load the search model once before any case is timed (its first load takes seconds)."""
    from ontology.embeddings import embed_one

    embed_one("warm-up")


@pytest.fixture(autouse=True)
def generous_limits(settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        "anon": "100000/minute", "user": "100000/minute"}}
    settings.LOGIN_THROTTLE_ACCOUNT = settings.LOGIN_THROTTLE_CLIENT = "100000/15m"
    settings.SUBSCRIBE_THROTTLE_CLIENT = "100000/10m"
    settings.ARXIV_API_URL = "http://127.0.0.1:9/api/query"  # nothing listens: network calls fail fast
    settings.ARXIV_DELAY_S = 0.0
    settings.GITHUB_API_URL = "http://127.0.0.1:9"
    settings.LLM_URL = "http://127.0.0.1:9/v1"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.CELERY_TASK_ALWAYS_EAGER = False


def pytest_terminal_summary(terminalreporter) -> None:
    if CASES:
        terminalreporter.section("fuzz cases tried per surface")
        for surface, count in sorted(CASES.items()):
            terminalreporter.write_line(f"{count:>7}  {surface}")
        terminalreporter.write_line(f"{sum(CASES.values()):>7}  total")

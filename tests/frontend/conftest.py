"""Fixtures for the page tests: the web test data (users and a small corpus), an empty cache."""
import pytest
from django.core.cache import cache

from tests.frontend.data import WebData, make_web_data


@pytest.fixture
def web(db) -> WebData:
    return make_web_data()


@pytest.fixture
def web_indexed(db) -> WebData:
    """The web data with search documents, for search tests."""
    return make_web_data(index=True)


@pytest.fixture(autouse=True)
def empty_cache():
    """Cached API pages (and throttle counters) from one test must not leak into the next."""
    cache.clear()
    yield
    cache.clear()

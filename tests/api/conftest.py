"""Fixtures for the API tests: the same web test data as the page tests."""
from tests.frontend.conftest import empty_cache, web, web_indexed  # noqa: F401  (fixture re-export)

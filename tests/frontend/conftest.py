"""Fixtures for the page tests: the web test data (users and a small corpus)."""
import pytest

from tests.frontend.data import WebData, make_web_data


@pytest.fixture
def web(db) -> WebData:
    return make_web_data()


@pytest.fixture
def web_indexed(db) -> WebData:
    """The web data with search documents, for search tests."""
    return make_web_data(index=True)

"""Fixtures of the knowledge-file tests: the ontology tests' paper and reviewer."""
from tests.ontology.conftest import editor, paper  # noqa: F401 (fixtures)

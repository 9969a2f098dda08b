"""Schemathesis generates requests from the OpenAPI schema for every operation (valid and invalid
inputs) and sends them to the WSGI app (test database, signed in as an editor with a token): no
request may get a server error, and every status, content type and body must match the schema. Bounded examples keep it
well under a minute. (Schemathesis' own pytest plugin does not load under pytest 9, so the test
drives its strategies with Hypothesis directly.)"""
import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.frontend.data import make_web_data

# What every answer must satisfy. Left out on purpose: positive/negative data checks (the domain
# rightly rejects schema-valid input such as an unknown GPU, and lists ignore an unusable page_size
# as DRF does) and the auth-bypass probe (it reports session OR token as "accepts invalid auth").
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = 6
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture
def api_schema(db, settings):
    """The schema served by the app itself, calls going straight to the WSGI handler.

    Like Django's test client, requests must not close the test's database connection (it holds
    the test transaction), so the per-request connection clean-up is switched off meanwhile.
    """
    from infrawiki.wsgi import application

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"anon": "100000/minute", "user": "100000/minute"}}
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def _fuzz(operation, mode: GenerationMode, headers: dict) -> None:
    @SETTINGS
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()


@pytest.mark.slow
def test_no_generated_request_gets_a_server_error_or_an_off_schema_answer(api_schema):
    data = make_web_data()
    headers = {"Authorization": f"Token {Token.objects.create(user=data.users['editor']).key}"}
    failures, tried = [], 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            tried += 1
            try:
                _fuzz(operation, mode, headers)
            except Unsatisfiable:
                continue  # no invalid input exists for this operation (e.g. no parameters): nothing to send
            except (Exception, BaseExceptionGroup) as exc:  # collect every operation's failures, report all
                failures.append(f"{operation.label} [{mode.value}]: {str(exc)[:1500]}")
    assert tried >= 20, "the schema lost its operations"
    assert not failures, "\n\n".join(failures)

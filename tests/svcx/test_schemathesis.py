"""Schemathesis against the live server (gunicorn and a real worker): for a few generated
requests per operation, valid and invalid, no server error and no answer the OpenAPI document
does not describe (status, content type, headers, body)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from svcx.views import openapi_document
from tests.conftest import WorkerProcess
from tests.factories import make_key, make_org

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def live_base(module_web: str) -> str:
    return module_web


@pytest.fixture
def live_key(session_worker: WorkerProcess) -> str:
    return make_key(make_org("Fuzzed", credits=10_000)).secret


# The document the server serves, generated from the code (the test checks the live server
# serves it too); pytest-django has set Django up before collection.
schema = schemathesis.openapi.from_dict(openapi_document())


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
def test_the_server_answers_as_its_openapi_document_says(case: Any, live_base: str, live_key: str) -> None:
    served = json.loads(urllib.request.urlopen(f"{live_base}/v1/openapi.json", timeout=10).read())
    assert served["paths"].keys() == schema.raw_schema["paths"].keys()

    case.call_and_validate(
        base_url=live_base, headers={"Authorization": f"Bearer {live_key}"}, checks=CHECKS, timeout=130
    )

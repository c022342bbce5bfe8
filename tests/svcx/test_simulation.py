"""X-Svcx-Simulate on test keys: each code returns its error as the real one would."""

from __future__ import annotations

import pytest
from django.test import Client

from billing.models import CreditHold, LedgerEntry
from billing.simulation import SIMULATE_CODES
from conversion.models import ConversionJob
from core.errors import CATALOGUE
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db]
PDF = b"%PDF-1.4 simulated, never opened"


def test_the_fourteen_codes_of_the_specification() -> None:
    assert len(SIMULATE_CODES) == 14
    assert set(SIMULATE_CODES) <= set(CATALOGUE)


@pytest.mark.parametrize("code", SIMULATE_CODES)
def test_each_code_returns_its_error_and_bills_nothing(client: Client, code: str) -> None:
    org = make_org(credits=10)
    secret = make_key(org, "test").secret

    response = client.post(
        "/v1/convert", data=PDF, content_type="application/pdf", HTTP_X_SVCX_SIMULATE=code, **bearer(secret)
    )

    spec = CATALOGUE[code]
    error = assert_envelope(response, spec.status, code)
    assert error["type"] == spec.type
    assert error["retryable"] == spec.retryable
    assert error["details"]["simulated"] is True
    if spec.status in (429, 503):
        assert int(response["Retry-After"]) >= 1
        assert error["retry_after_ms"] >= 1000
    if spec.status == 429:
        meter = error["details"]["meter"]
        assert f"x-ratelimit-limit-{meter}" in response
    if code == "insufficient_credits":
        assert {"credits_required", "credits_available", "top_up_url"} <= set(error["details"])
    if code == "account_delinquent":
        assert {"debt_credits", "credits_required_to_resume"} <= set(error["details"])
    if code == "conversion_timeout":
        assert "pages_completed" in error["details"]
    assert not ConversionJob.objects.exists()
    assert not CreditHold.objects.exists()
    assert LedgerEntry.objects.filter(organization=org).count() == 1


def test_simulation_counts_against_the_requests_meter(client: Client) -> None:
    secret = make_key(make_org(), "test").secret

    response = client.get("/v1/account", HTTP_X_SVCX_SIMULATE="overloaded", **bearer(secret))

    assert response.status_code == 503
    assert response["x-ratelimit-remaining-requests"] == "599"


def test_unknown_code_is_unsupported_option_value(client: Client) -> None:
    secret = make_key(make_org(), "test").secret

    error = assert_envelope(
        client.get("/v1/account", HTTP_X_SVCX_SIMULATE="pdf_on_fire", **bearer(secret)), 400, "unsupported_option_value"
    )

    assert error["param"] == "X-Svcx-Simulate"


def test_live_keys_ignore_the_header(client: Client) -> None:
    secret = make_key(make_org()).secret

    assert client.get("/v1/account", HTTP_X_SVCX_SIMULATE="overloaded", **bearer(secret)).status_code == 200
    assert client.get("/v1/account", HTTP_X_SVCX_SIMULATE="nonsense", **bearer(secret)).status_code == 200


def test_a_simulated_error_is_stored_and_replayed(client: Client) -> None:
    secret = make_key(make_org(), "test").secret
    headers = {"HTTP_X_SVCX_SIMULATE": "pdf_corrupt", "HTTP_IDEMPOTENCY_KEY": "sim-1"}

    first = client.post("/v1/convert", data=PDF, content_type="application/pdf", **headers, **bearer(secret))
    # The header is not part of the request's identity: without it, the stored error replays.
    replay = client.post(
        "/v1/convert", data=PDF, content_type="application/pdf", HTTP_IDEMPOTENCY_KEY="sim-1", **bearer(secret)
    )

    assert first.status_code == replay.status_code == 422
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()

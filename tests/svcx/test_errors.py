"""The error catalogue against the specification."""

from __future__ import annotations

import json
import re

import pytest

from conversion.engine.errors import ENGINE_ERROR_CODES
from core.errors import CATALOGUE, STATUSES_OF_TYPE, ErrorCode, ServiceError, caller_text, error_code
from tests.conftest import SPEC_DIR


def _spec_codes() -> set[str]:
    """Every code in the tables of interface.md sections 5.2 and 7.4."""
    text = (SPEC_DIR / "interface.md").read_text()
    section = (
        text[text.index("### 5.2 401 codes") : text.index("### 5.3")]
        + text[text.index("### 7.4 Codes") : text.index("## 8. Limits")]
    )
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.M))


def test_catalogue_has_every_code_of_the_specification() -> None:
    spec_codes = _spec_codes()

    assert len(spec_codes) > 60
    assert spec_codes | {"page_has_no_text_layer", "request_timeout"} <= set(CATALOGUE)


def test_every_status_fits_its_type() -> None:
    for spec in CATALOGUE.values():
        assert spec.status in STATUSES_OF_TYPE[spec.type], spec.code


@pytest.mark.parametrize(
    ("code", "status", "type_"),
    [
        ("metadata_too_large", 413, "invalid_request_error"),
        ("file_too_large", 413, "invalid_request_error"),
        ("storage_quota_exceeded", 413, "invalid_request_error"),
        ("too_many_pages", 400, "invalid_request_error"),
        ("page_range_out_of_bounds", 422, "invalid_request_error"),
        ("pdf_too_complex", 422, "invalid_request_error"),
        ("pdf_extraction_not_permitted", 403, "permission_error"),
        ("pdf_encrypted", 422, "document_error"),
        ("page_has_no_text_layer", 422, "document_error"),
        ("request_timeout", 408, "timeout_error"),
        ("conversion_timeout", 504, "timeout_error"),
        ("file_expired", 410, "not_found_error"),
        ("result_expired", 410, "not_found_error"),
        ("idempotency_in_progress", 409, "invalid_request_error"),
        ("unsupported_content_type", 415, "invalid_request_error"),
        ("unsupported_accept", 406, "invalid_request_error"),
        ("method_not_allowed", 405, "invalid_request_error"),
        ("account_delinquent", 402, "payment_required_error"),
        ("overloaded", 503, "overloaded_error"),
        ("internal_error", 500, "api_error"),
    ],
)
def test_status_and_type_follow_decisions(code: str, status: int, type_: str) -> None:
    assert (CATALOGUE[code].status, CATALOGUE[code].type) == (status, type_)


def test_retryable_follows_the_retry_rules() -> None:
    retryable = {code for code, spec in CATALOGUE.items() if spec.retryable}
    rate_limits = {code for code, spec in CATALOGUE.items() if spec.status == 429}

    assert len(rate_limits) == 9
    assert retryable == rate_limits | {"internal_error", "overloaded", "service_unavailable", "idempotency_in_progress"}


def test_every_code_has_a_message_and_help() -> None:
    for spec in CATALOGUE.values():
        assert spec.message.strip(), spec.code
        assert spec.help.strip(), spec.code


def test_unknown_code_cannot_be_raised() -> None:
    with pytest.raises(KeyError):
        ServiceError("no_such_code")


def test_caller_text_strips_control_characters_and_caps_at_128() -> None:
    assert caller_text("a\x00b\nc\x1bd\x7f") == "abcd"
    assert caller_text("x" * 500) == "x" * 128


def test_error_code_enumerates_exactly_the_catalogue() -> None:
    assert set(CATALOGUE) == set(ErrorCode)
    assert all(spec.code is code for code, spec in CATALOGUE.items())


def test_error_code_is_its_wire_string() -> None:
    error = ServiceError(ErrorCode.PDF_INVALID)

    assert error.code == "pdf_invalid"
    assert json.dumps({"code": error.code}) == '{"code": "pdf_invalid"}'
    assert f"{error.code}" == "pdf_invalid"


def test_every_engine_code_is_a_catalogue_code() -> None:
    assert {error_code(code) for code in ENGINE_ERROR_CODES} <= set(ErrorCode)
    assert error_code("no_such_code") is None

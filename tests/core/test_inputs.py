"""Input serializers' errors, as the one exception handler answers them."""

from __future__ import annotations

from rest_framework.exceptions import ErrorDetail, ValidationError

from core.handlers import to_service_error


def test_an_error_with_a_catalogue_code_keeps_its_code_message_and_field_path() -> None:
    exc = ValidationError({"options": {"pages": [ErrorDetail("`options.pages` is bad.", code="page_range_zero")]}})

    error = to_service_error(exc, None)

    assert (error.code, error.param, error.message) == ("page_range_zero", "options.pages", "`options.pages` is bad.")


def test_a_refusal_of_the_whole_object_names_the_object() -> None:
    detail = {
        "options": {
            "non_field_errors": [ErrorDetail("`options` must be a JSON object.", code="invalid_parameter_type")]
        }
    }

    error = to_service_error(ValidationError(detail), None)

    assert (error.code, error.param) == ("invalid_parameter_type", "options")


def test_the_first_refused_field_is_reported() -> None:
    detail = {
        "b": [ErrorDetail("`b` must be a string.", code="invalid_parameter_type")],
        "a": [ErrorDetail("Unknown.", code="unknown_parameter")],
    }

    assert to_service_error(ValidationError(detail), None).param == "b"


def test_an_error_without_a_catalogue_code_is_invalid_parameter_type_naming_the_field() -> None:
    error = to_service_error(ValidationError({"limit": {"inner": ["A valid integer is required."]}}), None)

    assert (error.code, error.param) == ("invalid_parameter_type", "limit")
    assert error.message == error.spec.message

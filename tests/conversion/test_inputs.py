"""What DRF's parsers, input serializers and negotiation answer for a document request, beside
the request-shape errors of test_intake: each is refused before any job exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from conversion.models import ConversionJob
from tests.conversion.test_intake import PDF_BYTES, post_json, post_multipart, upload
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def secret() -> str:
    return make_key(make_org(credits=100)).secret


@pytest.fixture(autouse=True)
def _no_job() -> Any:
    yield
    assert not ConversionJob.objects.exists()


def post_raw(client: Client, secret: str, query: str = "", path: str = "/v1/convert", **extra: Any) -> Any:
    return client.post(f"{path}{query}", data=PDF_BYTES, content_type="application/pdf", **bearer(secret), **extra)


def test_an_error_answer_to_a_markdown_request_is_the_json_envelope(client: Client, secret: str) -> None:
    response = post_json(client, secret, {"file_id": "file_nope"}, HTTP_ACCEPT="text/markdown")

    assert_envelope(response, 404, "file_not_found")


def test_an_unacceptable_accept_is_decided_after_the_key(client: Client) -> None:
    response = post_json(client, "sk_live_nope", {"file_id": "f"}, HTTP_ACCEPT="text/html")

    assert response.status_code == 401


def test_endpoints_answering_json_only_ignore_accept(client: Client, secret: str) -> None:
    engines = client.get("/v1/engines", HTTP_ACCEPT="text/markdown", **bearer(secret))
    inspect = client.post(
        "/v1/inspect",
        data=json.dumps({"file_id": "file_nope"}),
        content_type="application/json",
        HTTP_ACCEPT="text/html",
        **bearer(secret),
    )

    assert engines.status_code == 200
    assert engines["Content-Type"] == "application/json"
    assert_envelope(inspect, 404, "file_not_found")


def test_options_null_is_not_an_object(client: Client, secret: str) -> None:
    error = assert_envelope(post_json(client, secret, {"file_id": "f", "options": None}), 400, "invalid_parameter_type")

    assert (error["param"], error["message"]) == ("options", "`options` must be a JSON object.")


@pytest.mark.parametrize(
    ("options", "param"),
    [({"tables": 3, "pages": [1]}, "options.tables"), ({"pages": [1], "tables": 3}, "options.pages")],
)
def test_of_several_wrongly_typed_options_the_first_sent_is_named(
    client: Client, secret: str, options: dict[str, Any], param: str
) -> None:
    error = assert_envelope(
        post_json(client, secret, {"file_id": "f", "options": options}), 400, "invalid_parameter_type"
    )

    assert error["param"] == param


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ({"file_id": "f", "password": None}, "password", "`password` must be a string."),
        ({"file_id": "f", "metadata": None}, "metadata", "`metadata` must be a JSON object."),
        ({"file_id": "f", "debug": None}, "debug", "`debug` must be a JSON boolean (true or false, not a string)."),
    ],
)
def test_a_null_member_is_a_wrong_type_in_its_own_words(
    client: Client, secret: str, body: dict[str, Any], param: str, message: str
) -> None:
    error = assert_envelope(post_json(client, secret, body), 400, "invalid_parameter_type")

    assert (error["param"], error["message"]) == (param, message)


def test_a_multipart_debug_part_is_true_or_false(client: Client, secret: str, tmp_path: Path) -> None:
    response = post_multipart(client, secret, {"file": upload(tmp_path), "debug": "yes"})

    error = assert_envelope(response, 400, "invalid_parameter_type")
    assert (error["param"], error["message"]) == ("debug", "`debug` must be true or false.")


def test_raw_pdf_members_name_their_query_parameter_or_header(client: Client, secret: str) -> None:
    debug = assert_envelope(post_raw(client, secret, "?debug=yes"), 400, "invalid_parameter_type")
    metadata = assert_envelope(post_raw(client, secret, HTTP_X_SVCX_METADATA="null"), 400, "invalid_parameter_type")
    tables = assert_envelope(post_raw(client, secret, "?tables=auto"), 400, "unsupported_option_value")

    assert (debug["param"], debug["message"]) == ("debug", "`debug` must be true or false.")
    assert (metadata["param"], metadata["message"]) == ("X-Svcx-Metadata", "`X-Svcx-Metadata` must be a JSON object.")
    assert (tables["param"], tables["details"]) == ("tables", {"accepted": ["markdown", "html", "text"]})


def test_files_take_no_conversion_members(client: Client, secret: str, tmp_path: Path) -> None:
    raw = assert_envelope(post_raw(client, secret, "?debug=true", path="/v1/files/raw"), 400, "unknown_parameter")
    part = assert_envelope(
        client.post("/v1/files", {"file": upload(tmp_path), "options": "{}"}, **bearer(secret)),
        400,
        "unknown_parameter",
    )

    assert raw["message"] == "Unknown query parameter 'debug'; accepted: filename."
    assert part["param"] == "options"

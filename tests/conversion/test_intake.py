"""Request-shape errors of POST /v1/convert (decisions.md 1 and 2): each is refused before any
job, hold or ledger row exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from billing.models import CreditHold, LedgerEntry
from conversion.models import ConversionJob
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db]
PDF_BYTES = b"%PDF-1.4\n%fake but never opened\n"


@pytest.fixture
def secret() -> str:
    return make_key(make_org(credits=100)).secret


@pytest.fixture(autouse=True)
def _nothing_happened() -> Any:
    yield
    assert not ConversionJob.objects.exists()
    assert not CreditHold.objects.exists()
    assert not LedgerEntry.objects.exclude(kind="grant").exists()


def post_json(client: Client, secret: str, body: Any, query: str = "", **extra: Any) -> Any:
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(f"/v1/convert{query}", data=data, content_type="application/json", **bearer(secret), **extra)


def post_multipart(client: Client, secret: str, parts: dict[str, Any], query: str = "") -> Any:
    return client.post(f"/v1/convert{query}", parts, **bearer(secret))


def upload(tmp_path: Path) -> Any:
    path = tmp_path / "doc.pdf"
    path.write_bytes(PDF_BYTES)
    return path.open("rb")


def test_malformed_json(client: Client, secret: str) -> None:
    assert_envelope(post_json(client, secret, b'{"file_id": '), 400, "malformed_json")


def test_json_body_must_be_an_object(client: Client, secret: str) -> None:
    assert_envelope(post_json(client, secret, [1, 2]), 400, "invalid_parameter_type")


def test_malformed_multipart(client: Client, secret: str) -> None:
    response = client.post(
        "/v1/convert", data=b"--xyz\r\nnot a part", content_type="multipart/form-data; boundary=xyz", **bearer(secret)
    )
    assert_envelope(response, 400, "multipart_malformed")


def test_multipart_without_boundary(client: Client, secret: str) -> None:
    response = client.post("/v1/convert", data=b"--x--", content_type="multipart/form-data", **bearer(secret))
    assert_envelope(response, 400, "multipart_malformed")


def test_missing_source_in_each_encoding(client: Client, secret: str) -> None:
    assert_envelope(post_json(client, secret, {"options": {}}), 400, "missing_source")
    assert_envelope(post_multipart(client, secret, {"options": "{}"}), 400, "missing_source")
    assert_envelope(
        client.post("/v1/convert", data=b"", content_type="application/pdf", **bearer(secret)), 400, "missing_source"
    )
    assert_envelope(client.post("/v1/convert", **bearer(secret)), 400, "missing_source")


def test_multiple_sources(client: Client, secret: str, tmp_path: Path) -> None:
    error = assert_envelope(
        post_multipart(client, secret, {"file": upload(tmp_path), "file_id": "file_abc"}), 400, "multiple_sources"
    )
    assert error["param"] == "file_id"
    assert_envelope(
        post_json(client, secret, {"file_id": "file_abc", "url": "https://x/y.pdf"}), 400, "multiple_sources"
    )
    assert_envelope(post_json(client, secret, {"file_id": "file_abc", "base64": "JVBER"}), 400, "multiple_sources")


@pytest.mark.parametrize(("member", "said"), [("base64", "refused permanently"), ("url", "not available in v1")])
def test_unsupported_source_types(client: Client, secret: str, member: str, said: str) -> None:
    error = assert_envelope(post_json(client, secret, {member: "x"}), 400, "unsupported_source_type")

    assert error["param"] == member
    assert said in error["message"]


def test_unknown_top_level_member_and_part(client: Client, secret: str, tmp_path: Path) -> None:
    error = assert_envelope(post_json(client, secret, {"file_id": "file_a", "colour": "red"}), 400, "unknown_parameter")
    assert error["param"] == "colour"
    error = assert_envelope(
        post_multipart(client, secret, {"file": upload(tmp_path), "colour": "red"}), 400, "unknown_parameter"
    )
    assert error["param"] == "colour"


@pytest.mark.parametrize("encoding", ["json", "multipart"])
def test_unknown_option_names_its_exact_path(client: Client, secret: str, tmp_path: Path, encoding: str) -> None:
    options = {"pages": "1", "colour": "red"}
    if encoding == "json":
        response = post_json(client, secret, {"file_id": "file_a", "options": options})
    else:
        response = post_multipart(client, secret, {"file": upload(tmp_path), "options": json.dumps(options)})

    error = assert_envelope(response, 400, "unknown_parameter")

    assert error["param"] == "options.colour"


def test_unknown_query_option_on_raw_pdf(client: Client, secret: str) -> None:
    response = client.post("/v1/convert?colour=red", data=PDF_BYTES, content_type="application/pdf", **bearer(secret))

    assert assert_envelope(response, 400, "unknown_parameter")["param"] == "colour"


@pytest.mark.parametrize(
    ("options", "param"),
    [({"pages": [1, 2]}, "options.pages"), ({"tables": 3}, "options.tables"), ({"ocr": False}, "options.ocr")],
)
def test_wrong_option_type(client: Client, secret: str, options: dict[str, Any], param: str) -> None:
    error = assert_envelope(
        post_json(client, secret, {"file_id": "file_a", "options": options}), 400, "invalid_parameter_type"
    )

    assert error["param"] == param


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"file_id": 7}, "file_id"),
        ({"file_id": "f", "options": "pages=1"}, "options"),
        ({"file_id": "f", "password": 1}, "password"),
        ({"file_id": "f", "metadata": [1]}, "metadata"),
        ({"file_id": "f", "debug": "yes"}, "debug"),
    ],
)
def test_wrong_member_type(client: Client, secret: str, body: dict[str, Any], param: str) -> None:
    assert assert_envelope(post_json(client, secret, body), 400, "invalid_parameter_type")["param"] == param


def test_query_options_with_a_body_are_refused(client: Client, secret: str, tmp_path: Path) -> None:
    assert_envelope(post_json(client, secret, {"file_id": "f"}, "?pages=1"), 400, "query_options_not_allowed")
    assert_envelope(
        post_multipart(client, secret, {"file": upload(tmp_path)}, "?pages=1"), 400, "query_options_not_allowed"
    )


def test_metadata_over_4_kib_is_413(client: Client, secret: str, tmp_path: Path) -> None:
    big = {"note": "x" * 5000}

    error = assert_envelope(post_json(client, secret, {"file_id": "f", "metadata": big}), 413, "metadata_too_large")
    assert error["details"]["limit_bytes"] == 4096
    assert_envelope(
        post_multipart(client, secret, {"file": upload(tmp_path), "metadata": json.dumps(big)}),
        413,
        "metadata_too_large",
    )
    response = client.post(
        "/v1/convert",
        data=PDF_BYTES,
        content_type="application/pdf",
        HTTP_X_SVCX_METADATA=json.dumps(big),
        **bearer(secret),
    )
    assert_envelope(response, 413, "metadata_too_large")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/octet-stream", "application/x-www-form-urlencoded"]
)
def test_other_content_types_are_415_listing_the_three(client: Client, secret: str, content_type: str) -> None:
    error = assert_envelope(
        client.post("/v1/convert", data=b"x", content_type=content_type, **bearer(secret)),
        415,
        "unsupported_content_type",
    )

    for accepted in ("multipart/form-data", "application/json", "application/pdf"):
        assert accepted in error["message"]


@pytest.mark.parametrize("path", ["/v1/convert", "/v1/inspect", "/v1/toc", "/v1/files"])
def test_an_octet_stream_body_is_pointed_to_the_raw_operation(client: Client, secret: str, path: str) -> None:
    # Generated clients send a binary body as application/octet-stream: the raw operation
    # beside the endpoint takes it.
    error = assert_envelope(
        client.post(path, data=b"x", content_type="application/octet-stream", **bearer(secret)),
        415,
        "unsupported_content_type",
    )

    assert f"POST {path}/raw" in error["message"]
    assert error["details"]["raw_operation"] == f"{path}/raw"
    plain = assert_envelope(
        client.post(path, data=b"x", content_type="text/plain", **bearer(secret)), 415, "unsupported_content_type"
    )
    assert "raw_operation" not in plain["details"]


@pytest.mark.parametrize("path", ["/v1/convert/raw", "/v1/inspect/raw", "/v1/toc/raw", "/v1/files/raw"])
@pytest.mark.parametrize("content_type", ["multipart/form-data; boundary=x", "application/json", "text/plain"])
def test_raw_operations_take_only_the_raw_pdf(client: Client, secret: str, path: str, content_type: str) -> None:
    error = assert_envelope(
        client.post(path, data=b"x", content_type=content_type, **bearer(secret)), 415, "unsupported_content_type"
    )

    assert error["details"]["accepted"] == ["application/pdf", "application/octet-stream"]


@pytest.mark.parametrize("path", ["/v1/convert/raw", "/v1/inspect/raw", "/v1/toc/raw", "/v1/files/raw"])
def test_raw_operations_refuse_an_empty_body_as_missing_source(client: Client, secret: str, path: str) -> None:
    assert_envelope(
        client.post(path, data=b"", content_type="application/octet-stream", **bearer(secret)), 400, "missing_source"
    )


@pytest.mark.parametrize(
    "accept", ["text/html", "application/xml", "image/*", "text/markdown;q=0, application/json;q=0"]
)
def test_unacceptable_accept_is_406(client: Client, secret: str, accept: str) -> None:
    assert_envelope(post_json(client, secret, {"file_id": "f"}, HTTP_ACCEPT=accept), 406, "unsupported_accept")


def test_upload_over_32_mib_is_413_from_content_length(client: Client, secret: str) -> None:
    response = client.post(
        "/v1/convert",
        data=PDF_BYTES,
        content_type="application/pdf",
        CONTENT_LENGTH=str(33 * 1024 * 1024),
        **bearer(secret),
    )
    assert_envelope(response, 413, "file_too_large")


@pytest.mark.parametrize("path", ["/v1/convert", "/v1/files", "/v1/inspect"])
def test_declared_length_beyond_any_upload_is_413_not_a_rate_limit(client: Client, secret: str, path: str) -> None:
    # 99,999,999,999 bytes is over the uploads meter's minute too: it is never a matter of waiting.
    response = client.post(
        path, data=PDF_BYTES, content_type="application/pdf", CONTENT_LENGTH="99999999999", **bearer(secret)
    )

    error = assert_envelope(response, 413, "file_too_large")
    assert error["retryable"] is False
    assert not response.has_header("Retry-After")


def test_upload_over_the_limit_is_413_while_reading(client: Client, secret: str, settings: Any) -> None:
    settings.SVCX_CONVERT_UPLOAD_LIMIT = 1000

    response = client.post("/v1/convert", data=PDF_BYTES * 100, content_type="application/pdf", **bearer(secret))

    assert_envelope(response, 413, "file_too_large")
    assert not list(Path(settings.SVCX_SPOOL_DIR).glob("body-*"))


@pytest.mark.parametrize(
    ("options", "code", "param"),
    [
        ({"ocr": "auto"}, "ocr_not_available", "options.ocr"),
        ({"flavor": "commonmark"}, "unsupported_option_value", "options.flavor"),
        ({"flavor": "mmd"}, "unsupported_option_value", "options.flavor"),
        ({"tables": "auto"}, "unsupported_option_value", "options.tables"),
        ({"fallback": "headings"}, "unsupported_option_value", "options.fallback"),
        ({"pages": "0-3"}, "page_range_zero", "options.pages"),
        ({"pages": "7-3"}, "page_range_reversed", "options.pages"),
        ({"pages": "5,3"}, "page_range_invalid", "options.pages"),
        ({"pages": "1-5,3-7"}, "page_range_invalid", "options.pages"),
        ({"pages": "abc"}, "page_range_invalid", "options.pages"),
        ({"pages": ",".join(str(i) for i in range(1, 1002))}, "page_range_too_complex", "options.pages"),
        ({"pages": "1" + " " * 2100}, "page_range_too_complex", "options.pages"),
    ],
)
def test_option_values_are_refused_with_their_code(
    client: Client, secret: str, options: dict[str, Any], code: str, param: str
) -> None:
    error = assert_envelope(post_json(client, secret, {"file_id": "f", "options": options}), 400, code)

    assert error["param"] == param
    assert error["type"] == "invalid_request_error"


def test_query_option_errors_name_the_query_parameter(client: Client, secret: str) -> None:
    response = client.post("/v1/convert?pages=0", data=PDF_BYTES, content_type="application/pdf", **bearer(secret))

    assert assert_envelope(response, 400, "page_range_zero")["param"] == "pages"


def test_debug_refused_when_the_policy_is_disabled(client: Client) -> None:
    minted = make_key(make_org(credits=10, debug_policy="disabled"))

    error = assert_envelope(
        post_json(client, minted.secret, {"file_id": "f", "debug": True}), 403, "debug_not_permitted"
    )

    assert error["type"] == "permission_error"


def test_unknown_file_id_is_404(client: Client, secret: str) -> None:
    assert_envelope(post_json(client, secret, {"file_id": "file_nope"}), 404, "file_not_found")


def test_wrong_method_and_missing_scope(client: Client) -> None:
    org = make_org()
    reader = make_key(org, preset="read_only")

    assert client.get("/v1/convert", **bearer(reader.secret))["Allow"] == "POST"
    assert_envelope(post_json(client, reader.secret, {"file_id": "f"}), 403, "insufficient_scope")


def test_invalid_idempotency_key(client: Client, secret: str) -> None:
    error = assert_envelope(
        post_json(client, secret, {"file_id": "f"}, HTTP_IDEMPOTENCY_KEY="x" * 256), 400, "invalid_parameter_type"
    )

    assert error["param"] == "Idempotency-Key"


def test_a_replay_after_24_hours_is_result_expired(client: Client, secret: str) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from conversion.models import IdempotencyRecord

    headers = {"HTTP_IDEMPOTENCY_KEY": "old-one"}
    first = post_json(client, secret, {"file_id": "file_nope"}, **headers)
    assert first.status_code == 404
    IdempotencyRecord.objects.update(completed_at=timezone.now() - timedelta(hours=25))

    error = assert_envelope(post_json(client, secret, {"file_id": "file_nope"}, **headers), 410, "result_expired")

    assert error["type"] == "not_found_error"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ('{"file_id": "file_x", "metadata": {"a": "\\ud800"}}', "metadata.a"),
        ('{"file_id": "file_x", "options": {"\\udc00": 1}}', "options.?"),
        ('{"file_id": "file_x", "password": "\\ud800"}', "password"),
    ],
)
def test_a_json_string_with_an_unpaired_surrogate_is_malformed_json(
    client: Client, secret: str, body: str, param: str
) -> None:
    error = assert_envelope(post_json(client, secret, body), 400, "malformed_json")

    assert error["param"] == param


def test_a_metadata_part_with_an_unpaired_surrogate_is_malformed_json(
    client: Client, secret: str, tmp_path: Path
) -> None:
    response = post_multipart(client, secret, {"file": upload(tmp_path), "metadata": '{"a": "\\ud800"}'})

    assert assert_envelope(response, 400, "malformed_json")["param"] == "metadata.a"


def test_metadata_with_a_nul_character_is_refused(client: Client, secret: str) -> None:
    error = assert_envelope(
        post_json(client, secret, {"file_id": "file_x", "metadata": {"note": "a\u0000b"}}),
        400,
        "invalid_parameter_type",
    )

    assert error["param"] == "metadata.note"


def test_a_file_id_no_file_can_have_is_404(client: Client, secret: str) -> None:
    for file_id in ("file_\u0000x", "file_ab/../cd", "nofile"):
        assert_envelope(post_json(client, secret, {"file_id": file_id}), 404, "file_not_found")
    assert_envelope(client.get("/v1/files/file_%00", **bearer(secret)), 404, "file_not_found")


def test_debug_in_json_must_be_a_boolean_not_a_string(client: Client, secret: str) -> None:
    error = assert_envelope(
        post_json(client, secret, {"file_id": "file_x", "debug": "true"}), 400, "invalid_parameter_type"
    )

    assert error["param"] == "debug"
    assert "JSON boolean" in error["message"]


def test_an_oversized_json_body_names_its_limit_in_kib(client: Client, secret: str) -> None:
    body = json.dumps({"file_id": "file_x", "metadata": {"pad": "x" * 300_000}})

    error = assert_envelope(post_json(client, secret, body), 413, "file_too_large")

    assert error["message"] == "The JSON body is larger than 256 KiB."


def test_unsupported_content_type_on_files_lists_what_files_accepts(client: Client, secret: str) -> None:
    response = client.post("/v1/files", data=b"{}", content_type="application/json", **bearer(secret))

    error = assert_envelope(response, 415, "unsupported_content_type")
    assert error["details"]["accepted"] == ["multipart/form-data", "application/pdf"]
    assert "application/json" not in error["message"].split("not accepted here")[1]


def test_a_multipart_part_without_a_name_is_refused_not_ignored(client: Client, secret: str) -> None:
    body = (
        b"--xyz\r\n"
        b'Content-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n'
        + PDF_BYTES
        + b"\r\n--xyz\r\n"
        b'Content-Type: application/json\r\n\r\n{"pages": "1"}\r\n'  # options, but no Content-Disposition
        b"--xyz--\r\n"
    )

    response = client.post("/v1/convert", data=body, content_type="multipart/form-data; boundary=xyz", **bearer(secret))

    assert "could not be read" in assert_envelope(response, 400, "multipart_malformed")["message"]


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

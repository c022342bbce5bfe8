"""The OpenAPI description is generated, valid, and covers every /v1 route."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from openapi_spec_validator import validate

from conversion.intake import JSON, MULTIPART, PDF
from conversion.options import FALLBACKS, FLAVORS, TABLES, OptionsSerializer
from conversion.requests import DocumentApi
from core.api import ApiView
from core.errors import CATALOGUE


def _api_routes() -> list[tuple[str, type[ApiView]]]:
    routes: list[tuple[str, type[ApiView]]] = []

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                view = getattr(pattern.callback, "view_class", None)
                route = prefix + str(pattern.pattern)
                if view and issubclass(view, ApiView) and route.startswith("v1/"):
                    routes.append(("/" + route.replace("<str:", "{").replace("<", "{").replace(">", "}"), view))

    walk(get_resolver().url_patterns, "")
    return routes


@pytest.fixture
def document(client: Client) -> dict[str, Any]:
    response = client.get("/v1/openapi.json", HTTP_AUTHORIZATION="Bearer ignored")
    assert response.status_code == 200
    return response.json()


def test_document_is_valid_openapi(document: dict[str, Any]) -> None:
    validate(document)


def test_every_api_route_is_described_with_a_summary_and_description(document: dict[str, Any]) -> None:
    routes = _api_routes()
    assert routes

    for path, view in routes:
        assert path in document["paths"], f"{path} ({view.__name__}) is missing from the OpenAPI document"
        for method in view().allowed_methods:
            if method == "HEAD":
                continue
            operation = document["paths"][path][method.lower()]
            assert operation.get("summary"), f"{method} {path} has no summary"
            assert operation.get("description"), f"{method} {path} has no description (docstring)"


def test_every_operation_documents_the_request_id_and_its_error_codes(document: dict[str, Any]) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                assert "X-Request-Id" in response["headers"], f"{method} {path} {status}"
            codes = [
                c
                for r in operation["responses"].values()
                for c in r.get("content", {}).get("application/json", {}).get("x-error-codes", [])
            ]
            assert "method_not_allowed" in codes
            assert "internal_error" in codes
            for code in codes:
                assert str(CATALOGUE[code].status) in operation["responses"]


def test_envelope_schema_lists_every_catalogue_code(document: dict[str, Any]) -> None:
    envelope = document["components"]["schemas"]["ErrorEnvelope"]["properties"]["error"]

    assert set(envelope["properties"]["code"]["enum"]) == set(CATALOGUE)
    assert set(envelope["required"]) == {
        "type",
        "code",
        "message",
        "param",
        "retryable",
        "retry_after_ms",
        "doc_url",
        "request_id",
        "details",
    }


def test_unauthenticated_endpoints_need_no_key(document: dict[str, Any]) -> None:
    assert document["paths"]["/v1/health"]["get"]["security"] == []
    assert document["paths"]["/v1/openapi.json"]["get"]["security"] == []


def test_authenticated_operations_document_rate_limit_headers_and_simulation(document: dict[str, Any]) -> None:
    operation = document["paths"]["/v1/convert"]["post"]

    assert "x-ratelimit-remaining-{meter}" in operation["responses"]["200"]["headers"]
    assert "Retry-After" in operation["responses"]["429"]["headers"]
    assert {p["name"] for p in operation["parameters"]} >= {"Idempotency-Key", "X-Svcx-Simulate"}
    codes_429 = operation["responses"]["429"]["content"]["application/json"]["x-error-codes"]
    assert {"rate_limit_requests", "rate_limit_pages", "rate_limit_concurrency"} <= set(codes_429)


def test_every_route_of_the_specification_exists(document: dict[str, Any]) -> None:
    expected = {
        ("post", "/v1/convert"),
        ("post", "/v1/files"),
        ("delete", "/v1/files/{file_id}"),
        ("get", "/v1/files/{file_id}"),
        ("post", "/v1/inspect"),
        ("get", "/v1/account"),
        ("get", "/v1/credits/ledger"),
        ("get", "/v1/usage"),
        ("get", "/v1/usage/records"),
        ("post", "/v1/toc"),
        ("get", "/v1/health"),
        ("get", "/v1/openapi.json"),
        ("get", "/v1/engines"),
        ("get", "/v1/engines/{engine_id}"),
    }

    present = {(method, path) for path, operations in document["paths"].items() for method in operations}
    assert expected <= present


def test_every_success_response_describes_its_body(document: dict[str, Any]) -> None:
    missing = [
        f"{method.upper()} {path} {status}"
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        for status, response in operation["responses"].items()
        if status.startswith("2") and status != "204" and not response.get("content")
    ]

    assert missing == []


def test_query_options_and_raw_headers_are_offered_with_the_raw_pdf_only(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for path in ("/v1/convert", "/v1/inspect", "/v1/toc"):
        names = {p["name"] for p in document["paths"][path]["post"]["parameters"]}
        raw_names = {p["name"] for p in document["paths"][f"{path}/raw"]["post"]["parameters"]}
        body = document["paths"][path]["post"]["requestBody"]
        raw_body = document["paths"][f"{path}/raw"]["post"]["requestBody"]

        assert not {"pages", "ocr", "flavor", "tables", "fallback", "debug", "X-Svcx-Pdf-Password"} & names, path
        assert {"pages", "ocr", "flavor", "tables", "fallback", "debug"} <= raw_names, path
        assert {"X-Svcx-Pdf-Password", "X-Svcx-Metadata", "Idempotency-Key"} <= raw_names, path
        assert (set(body["content"]), body["required"]) == ({"multipart/form-data", "application/json"}, True)
        assert raw_body["content"] == {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}
        assert raw_body["required"] is True
        for media in body["content"].values():
            described = schemas[media["schema"]["$ref"].rsplit("/", 1)[1]]
            assert described["additionalProperties"] is False, path
            assert described["properties"]["metadata"]["type"] == "object"
            options = schemas[described["properties"]["options"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]
            assert (options["type"], options["additionalProperties"]) == ("object", False)
            assert options["properties"]["pages"]["maxLength"] == 2048


def test_convert_answers_json_or_markdown_as_the_client_accepts(document: dict[str, Any]) -> None:
    for path in ("/v1/convert", "/v1/convert/raw"):
        operation = document["paths"][path]["post"]

        assert set(operation["responses"]["200"]["content"]) == {"application/json", "text/markdown"}
        assert "Accept: text/markdown" in operation["description"]
        # Accept is told by the responses' media types, never a parameter (OpenAPI 3.0 ignores
        # one): a generated client offered it and then parsed the Markdown as JSON.
        assert "Accept" not in {p["name"] for p in operation["parameters"]}


def test_convert_is_negotiated_by_accept_alone_with_no_format_parameter(document: dict[str, Any]) -> None:
    for path in ("/v1/convert", "/v1/convert/raw"):
        names = {p["name"] for p in document["paths"][path]["post"]["parameters"]}

        assert "format" not in names, path


def test_enforced_bounds_are_stated(document: dict[str, Any]) -> None:
    for path in ("/v1/credits/ledger", "/v1/usage/records"):
        limit = next(p for p in document["paths"][path]["get"]["parameters"] if p["name"] == "limit")
        assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 100)
    key = next(p for p in document["paths"]["/v1/convert"]["post"]["parameters"] if p["name"] == "Idempotency-Key")
    assert (key["schema"]["minLength"], key["schema"]["maxLength"]) == (1, 255)


def test_list_answers_describe_their_rows(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for path in ("/v1/engines", "/v1/credits/ledger", "/v1/usage/records"):
        ref = document["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        listed = schemas[ref.rsplit("/", 1)[1]]
        assert {"object", "data", "has_more"} <= set(listed["properties"]), path
        rows = listed["properties"]["data"]["items"]
        assert rows.get("$ref") or rows.get("properties"), path


def test_conversion_pages_describe_their_elements_field_by_field(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    page = schemas["ConversionPage"]["properties"]
    assert {"width", "height", "elements"} <= set(page)
    element = schemas["Element"]
    assert set(element["properties"]) == {
        "type",
        "bbox",
        "text",
        "in_markdown",
        "md_span",
        "doc_span",
        "level",
        "depth",
        "marker",
        "rows",
        "header_rows",
        "caption",
        "reason",
        "source",
        "confidence",
        "image",
    }
    assert set(element["required"]) == {"type", "bbox", "text", "in_markdown"}
    image = schemas["FigureImage"]
    assert set(image["properties"]) == set(image["required"]) == {"file_id", "dpi", "width", "height"}
    assert element["properties"]["md_span"]["minItems"] == element["properties"]["md_span"]["maxItems"] == 2
    assert set(schemas["TypeEnum"]["enum"]) >= {"heading", "paragraph", "list_item", "table", "hidden_text"}
    cell = schemas["Cell"]
    assert set(cell["properties"]) == {"text", "row", "col", "rowspan", "colspan", "bbox"}
    assert element["properties"]["bbox"]["minItems"] == element["properties"]["bbox"]["maxItems"] == 4


def test_bodies_are_checked_against_the_description_closed(document: dict[str, Any]) -> None:
    # The suite checks every 2xx JSON body it receives (tests/openapi_bodies.py); the check
    # must refuse a member the description lacks and miss no required one.
    from tests import openapi_bodies

    openapi_bodies.load(document)
    engine = {"object": "engine", "id": "svcx-layout", "version": "1", "description": "x", "default": True}
    engine |= {"ocr": False, "tables": ["markdown"], "flavors": ["gfm"], "ocr_languages": ["en"]}
    engines = {"object": "list", "data": [engine], "has_more": False, "request_id": "req_1"}
    assert list(openapi_bodies.problems("GET", "/v1/engines", 200, engines)) == []
    extra = {**engines, "data": [{**engine, "undescribed": 1}]}
    assert ["'undescribed' was unexpected" in p for p in openapi_bodies.problems("GET", "/v1/engines", 200, extra)] == [
        True
    ]
    missing = {key: value for key, value in engines.items() if key != "has_more"}
    assert any(
        "'has_more' is a required property" in p for p in openapi_bodies.problems("GET", "/v1/engines", 200, missing)
    )


# The members a document request carries beside its source are validated by the input
# serializer its view names per encoding (conversion.requests.DocumentApi.members); the request
# bodies and the raw operations' parameters are described beside them. They must name the same
# members, or a client generated from the description sends what the service refuses.
_SOURCES = {MULTIPART: {"file"}, JSON: {"file_id"}}
_SHARED_PARAMETERS = {"Idempotency-Key", "X-Svcx-Simulate"}


def _schema(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema or "allOf" in schema:  # a reference, or one with its own description
        schema = (
            schema["allOf"][0]
            if "allOf" in schema
            else document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
        )
    return schema


def _members(serializer_class: type[Any]) -> set[str]:
    return set(serializer_class().fields)


def test_documented_request_members_are_the_ones_the_input_serializers_take(document: dict[str, Any]) -> None:
    checked = 0
    options: dict[str, Any] = {}
    for path, view in _api_routes():
        if not issubclass(view, DocumentApi):
            continue
        operation = document["paths"][path]["post"]
        if path.endswith("/raw"):
            named = {p["name"] for p in operation["parameters"] if p["in"] in ("query", "header")}
            assert named - _SHARED_PARAMETERS == _members(view.members[PDF]), path
            checked += 1
            continue
        for encoding, content in operation["requestBody"]["content"].items():
            described = _schema(document, content["schema"])["properties"]
            assert set(described) == _SOURCES[encoding] | _members(view.members[encoding]), (path, encoding)
            if "options" in described:
                options = _schema(document, described["options"])
            checked += 1
    assert checked >= 10  # convert, inspect, toc (multipart, JSON, raw each) and the file uploads

    assert set(options["properties"]) == _members(OptionsSerializer)
    for name, accepted in (("flavor", FLAVORS), ("tables", TABLES), ("fallback", FALLBACKS)):
        assert _schema(document, options["properties"][name])["enum"] == list(accepted)

"""GET /v1/engines and GET /v1/engines/{id}: any valid key, whatever its scopes."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from conversion import engine
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db]


def test_any_key_lists_the_engines(settings: Any) -> None:
    client = Client()
    read_only = make_key(make_org(), scopes=["account:read"])

    response = client.get("/v1/engines", **bearer(read_only.secret))

    body = response.json()
    assert response.status_code == 200
    assert (body["object"], body["has_more"]) == ("list", False)
    # The PDFium engine is not offered unless the operator turns it on (SVCX_PDFIUM_ENGINE).
    assert [(e["id"], e["version"], e["default"]) for e in body["data"]] == [
        (engine.ENGINE_ID, engine.ENGINE_VERSION, True)
    ]
    assert body["request_id"] == response["X-Request-Id"]
    assert_envelope(
        client.get(f"/v1/engines/{engine.PDFIUM_ENGINE_ID}", **bearer(read_only.secret)), 404, "engine_not_found"
    )

    settings.SVCX_PDFIUM_ENGINE = True
    body = client.get("/v1/engines", **bearer(read_only.secret)).json()
    assert [(e["id"], e["version"], e["default"]) for e in body["data"]] == [
        (engine.ENGINE_ID, engine.ENGINE_VERSION, True),
        (engine.PDFIUM_ENGINE_ID, engine.PDFIUM_ENGINE_VERSION, False),
    ]


def test_an_engine_is_read_by_its_identifier(client: Client) -> None:
    minted = make_key(make_org(), "test")

    body = client.get(f"/v1/engines/{engine.ENGINE_ID}", **bearer(minted.secret)).json()

    assert (body["object"], body["id"], body["ocr"], body["tables"]) == (
        "engine",
        engine.ENGINE_ID,
        False,
        ["markdown", "html", "text"],
    )
    # The languages of Debian's tesseract-ocr-* packages the set-up installs (.ci/run).
    assert set(body["ocr_languages"]) >= {"en", "de", "fr", "es", "ar", "zh"}


def test_an_unknown_engine_is_404_engine_not_found(client: Client) -> None:
    minted = make_key(make_org())

    error = assert_envelope(client.get("/v1/engines/docling", **bearer(minted.secret)), 404, "engine_not_found")

    assert "docling" in error["message"]


def test_engines_need_a_key_and_take_no_query(client: Client) -> None:
    minted = make_key(make_org())

    assert_envelope(client.get("/v1/engines"), 401, "missing_api_key")
    assert_envelope(client.get("/v1/engines?verbose=1", **bearer(minted.secret)), 400, "unknown_parameter")
    assert_envelope(client.post("/v1/engines", **bearer(minted.secret)), 405, "method_not_allowed")


def _engine_enums(document: Any) -> list[list[str]]:
    """Every enumeration of the OpenAPI document that lists an engine."""
    found: list[list[str]] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            values = node.get("enum")
            if isinstance(values, list) and engine.ENGINE_ID in values:
                found.append(values)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(document)
    return found


def test_the_openapi_document_lists_the_engines_offered(client: Client, settings: Any) -> None:
    # The option `engine` of each encoding (a component) and the raw operations' query parameter.
    enums = _engine_enums(client.get("/v1/openapi.json").json())
    assert len(enums) >= 2
    assert enums == [[engine.ENGINE_ID]] * len(enums)

    settings.SVCX_PDFIUM_ENGINE = True
    enums = _engine_enums(client.get("/v1/openapi.json").json())
    assert enums == [[engine.ENGINE_ID, engine.PDFIUM_ENGINE_ID]] * len(enums)

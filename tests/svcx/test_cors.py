"""CORS is open on health and the OpenAPI document only."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/v1/health", "/v1/openapi.json"])
def test_open_endpoints_allow_any_origin(client: Client, path: str) -> None:
    response = client.get(path, HTTP_ORIGIN="https://example.org")

    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("path", ["/v1/health", "/v1/openapi.json"])
def test_open_endpoints_answer_preflight_with_204(client: Client, path: str) -> None:
    response = client.options(path, HTTP_ORIGIN="https://example.org", HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET")

    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "GET" in response["Access-Control-Allow-Methods"]


@pytest.mark.urls("tests.svcx.failing_urls")
def test_preflight_on_an_api_endpoint_is_405_without_cors_headers(client: Client) -> None:
    response = client.options(
        "/v1/test/echo", HTTP_ORIGIN="https://example.org", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert response["Allow"] == "POST"
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


@pytest.mark.urls("tests.svcx.failing_urls")
def test_api_endpoint_emits_no_cors_header(client: Client) -> None:
    response = client.post(
        "/v1/test/echo", data=b"{}", content_type="application/json", HTTP_ORIGIN="https://example.org"
    )

    assert response.status_code == 200
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]

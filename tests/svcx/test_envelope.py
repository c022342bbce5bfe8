"""Every non-2xx response is exactly the envelope of interface.md 7.1, on every path."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

ENVELOPE_KEYS = {"type", "code", "message", "param", "retryable", "retry_after_ms", "doc_url", "request_id", "details"}
REQUEST_ID = re.compile(r"^req_[0-9A-Za-z]{24}$")


def assert_envelope(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = json.loads(response.content)
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == ENVELOPE_KEYS
    assert error["code"] == code
    assert REQUEST_ID.match(error["request_id"])
    assert response["X-Request-Id"] == error["request_id"]
    assert error["doc_url"] == f"https://svcx.test/docs/errors/{code}"
    assert isinstance(error["details"], dict)
    return error


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options", "head"])
@pytest.mark.parametrize("path", ["/v1/nothing-here", "/v1", "/v2/convert", "/v1/health/extra"])
def test_unknown_route_is_404_unknown_endpoint_for_every_method(client: Client, method: str, path: str) -> None:
    response = getattr(client, method)(path)

    if method == "head":
        assert response.status_code == 404
        return
    error = assert_envelope(response, 404, "unknown_endpoint")
    assert error["type"] == "not_found_error"
    assert error["retryable"] is False
    assert error["param"] is None


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "options"])
def test_root_sends_a_person_to_the_console_and_other_methods_get_the_envelope(client: Client, method: str) -> None:
    assert client.get("/")["Location"] == "/console/"
    assert client.head("/")["Location"] == "/console/"
    error = assert_envelope(getattr(client, method)("/"), 404, "unknown_endpoint")
    assert error["message"] == "No endpoint / exists. Every route lives under /v1; see /v1/openapi.json."


def test_trailing_slash_on_a_real_route_says_to_remove_it(client: Client) -> None:
    error = assert_envelope(client.get("/v1/health/"), 404, "unknown_endpoint")

    assert "remove the trailing slash" in error["message"]


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", ["/v1/health", "/v1/openapi.json"])
def test_wrong_method_is_405_with_allow(client: Client, method: str, path: str) -> None:
    response = getattr(client, method)(path, HTTP_AUTHORIZATION="Bearer nonsense")

    error = assert_envelope(response, 405, "method_not_allowed")
    assert response["Allow"] == "GET, HEAD"
    assert error["type"] == "invalid_request_error"


def test_long_path_in_message_is_capped_and_stripped(client: Client) -> None:
    error = assert_envelope(client.get("/v1/" + "a" * 400 + "%1b%07"), 404, "unknown_endpoint")

    assert "a" * 129 not in error["message"]
    assert "\x1b" not in error["message"]
    assert "\x07" not in error["message"]


@pytest.mark.urls("tests.svcx.failing_urls")
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/v1/test/plain-crash", "/v1/test/crash"])
def test_unhandled_exception_is_500_internal_error_without_internals(
    client: Client, settings: Any, debug: bool, path: str
) -> None:
    settings.DEBUG = debug

    response = client.get(path)

    error = assert_envelope(response, 500, "internal_error")
    assert error["type"] == "api_error"
    assert error["retryable"] is True
    text = response.content.decode()
    for leak in ("/srv/secret", "SELECT", "db.internal", "5432", "Traceback", "<html"):
        assert leak not in text


@pytest.mark.urls("tests.svcx.failing_urls")
def test_database_outage_is_503_retryable_without_address(client: Client) -> None:
    response = client.get("/v1/test/db-down")

    error = assert_envelope(response, 503, "service_unavailable")
    assert error["retryable"] is True
    assert int(response["Retry-After"]) >= 1
    assert "10.0.0.5" not in response.content.decode()


@pytest.mark.urls("tests.svcx.failing_urls")
def test_suspicious_request_is_400_envelope(client: Client) -> None:
    assert_envelope(client.get("/v1/test/suspicious"), 400, "bad_request")


@pytest.mark.urls("tests.svcx.failing_urls")
@pytest.mark.parametrize("body", [b"{", b'{"a": }', b"\xff\xfe", b"[1,2"])
def test_unparsable_json_is_400_malformed_json(client: Client, body: bytes) -> None:
    response = client.post("/v1/test/echo", data=body, content_type="application/json")

    error = assert_envelope(response, 400, "malformed_json")
    assert error["type"] == "invalid_request_error"


@pytest.mark.urls("tests.svcx.failing_urls")
def test_parsable_json_reaches_the_view(client: Client) -> None:
    response = client.post("/v1/test/echo", data=b'{"a": 1}', content_type="application/json")

    assert response.status_code == 200
    assert response.json()["echo"] == {"a": 1}


@pytest.mark.django_db
def test_admin_csrf_failure_is_an_envelope_not_html() -> None:
    client = Client(enforce_csrf_checks=True)

    response = client.post("/admin/login/", {"username": "x", "password": "y"})

    assert_envelope(response, 403, "insufficient_scope")


def test_request_ids_are_unique_and_match_the_body(client: Client) -> None:
    ids = set()
    for _ in range(5):
        response = client.get("/v1/nothing")
        ids.add(response["X-Request-Id"])
        assert response.json()["error"]["request_id"] == response["X-Request-Id"]

    assert len(ids) == 5
    assert all(REQUEST_ID.match(i) for i in ids)


@pytest.mark.django_db
def test_success_json_bodies_carry_the_request_id(client: Client) -> None:
    response = client.get("/v1/openapi.json")

    assert response.status_code == 200
    assert REQUEST_ID.match(response["X-Request-Id"])


@pytest.mark.django_db(transaction=True)
def test_requests_the_web_server_refuses_get_the_envelope_too(tmp_path: Any) -> None:
    import socket

    from tests.conftest import start_web

    malformed = [
        b"THIS IS NOT HTTP\r\n\r\n",
        b"GET /v1/health HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n",
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ]
    process, base = start_web(tmp_path)
    replies = []
    try:
        host, port = base.removeprefix("http://").split(":")
        for raw in malformed:
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(raw)
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
            replies.append(reply)
    finally:
        process.terminate()
        process.wait(timeout=20)

    codes = []
    for reply in replies:
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400")
        assert b"Content-Type: application/json" in head
        assert b"<html" not in reply.lower()
        error = json.loads(body)["error"]
        assert set(error) == ENVELOPE_KEYS
        codes.append((error["code"], error["details"]["http_status"]))
    # A request line too long says so, and where long options go.
    assert codes == [("bad_request", 400), ("bad_request", 400), ("uri_too_long", 414)]
    assert "in the body" in json.loads(replies[2].partition(b"\r\n\r\n")[2])["error"]["message"]


def test_the_web_servers_worker_answers_its_refusals_through_the_edge() -> None:
    from gunicorn import util
    from gunicorn.workers.gthread import ThreadWorker

    from core import edge
    from svcx import gunicorn_conf, gunicorn_worker

    assert gunicorn_conf.worker_class == "svcx.gunicorn_worker.JsonErrorThreadWorker"
    assert issubclass(gunicorn_worker.JsonErrorThreadWorker, ThreadWorker)
    assert util.write_error is edge.write_error


@pytest.mark.django_db
@pytest.mark.urls("tests.svcx.failing_urls")
def test_a_nul_character_that_reaches_the_database_is_a_400_not_a_500(client: Client) -> None:
    error = assert_envelope(client.get("/v1/test/nul"), 400, "bad_request")

    assert error["retryable"] is False
    assert "NUL" in error["message"]

"""One structured access line per request, never carrying a key."""

from __future__ import annotations

import json
import logging

import pytest
from django.test import Client

from svcx.logging import JsonFormatter

KEY = "svcx_sk_live_" + "A" * 43 + "_000000"


def test_one_access_line_per_request_with_id_status_and_duration(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="svcx.access")

    response = client.get("/v1/nowhere")

    records = [r for r in caplog.records if r.name == "svcx.access"]
    assert len(records) == 1
    line = json.loads(JsonFormatter().format(records[0]))
    assert line["request_id"] == response["X-Request-Id"]
    assert line["status"] == 404
    assert line["error_code"] == "unknown_endpoint"
    assert line["method"] == "GET"
    assert line["path"] == "/v1/nowhere"
    assert isinstance(line["duration_ms"], float)


def test_a_key_in_the_query_string_or_header_never_reaches_the_log(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    client.get(f"/v1/nowhere?api_key={KEY}", HTTP_AUTHORIZATION=f"Bearer {KEY}", HTTP_X_API_KEY=KEY)

    formatter = JsonFormatter()
    assert caplog.records
    assert all(KEY not in formatter.format(r) for r in caplog.records)

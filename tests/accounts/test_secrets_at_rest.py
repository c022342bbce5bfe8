"""A full key is never stored or logged: the database dump and the logs are searched for it."""

from __future__ import annotations

import logging
import os
import subprocess

import pytest
from django.db import connection
from django.test import Client

from accounts import services
from billing.models import RequestLog, UsageRecord
from billing.usage import usage_copy
from svcx.logging import JsonFormatter
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.svcx.failing_urls")]


def _dump() -> str:
    db = connection.settings_dict
    env = {**os.environ, "PGPASSWORD": db.get("PASSWORD") or ""}
    return subprocess.run(
        [
            "pg_dump",
            "-h",
            db.get("HOST") or "127.0.0.1",
            "-p",
            str(db.get("PORT") or 5432),
            "-U",
            db.get("USER") or "postgres",
            "--data-only",
            db["NAME"],
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout


def test_a_fresh_key_is_nowhere_in_the_database_or_the_logs(client: Client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    org = make_org()
    minted = make_key(org)
    rotated = services.api_key_rotate(api_key=minted.api_key)
    leaked = services.api_key_confirm_leak(api_key=rotated.api_key)
    client.get("/v1/test/whoami", **bearer(minted.secret))
    client.get(f"/v1/test/whoami?key={rotated.secret}")
    client.get("/v1/test/whoami", HTTP_X_API_KEY=minted.secret)

    dump = _dump()
    logs = "\n".join(JsonFormatter().format(r) for r in caplog.records)

    assert minted.api_key.id in dump  # the dump is real and holds the key's row
    assert leaked.reveal_url.rsplit("/", 1)[1] not in dump  # nor the token that unseals the replacement
    for secret in (minted.secret, rotated.secret):
        assert secret not in dump
        assert secret[13:56] not in dump  # not even the random part
        assert secret not in logs


def test_a_key_pasted_into_a_url_path_is_refused_and_masked_in_logs_and_rows(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    org = make_org()
    caller = make_key(org)
    pasted = make_key(org)
    console_token = "svcx_cs_" + "t" * 40  # a secret too, though not an API key

    refused = client.get(f"/v1/files/{pasted.secret}", **bearer(caller.secret))
    unrouted = client.get(f"/v1/{pasted.secret}/files", **bearer(caller.secret))
    logged = client.get(f"/v1/files/{console_token}", **bearer(caller.secret))
    usage_copy()
    dump = _dump()
    logs = "\n".join(JsonFormatter().format(r) for r in caplog.records)

    # Treated as exposed, as a key in the query string is: refused, even beside a valid bearer.
    error = assert_envelope(refused, 401, "missing_api_key")
    assert "URL path" in error["message"]
    assert "exposed" in error["message"]
    unknown = assert_envelope(unrouted, 404, "unknown_endpoint")
    assert pasted.secret not in unknown["message"]
    assert logged.status_code == 404  # an authenticated request: it has a request-log row
    assert RequestLog.objects.get(request_id=logged["X-Request-Id"]).endpoint == "/v1/files/svcx_cs_[redacted]"
    assert UsageRecord.objects.filter(request_id=logged["X-Request-Id"]).exists()
    for secret in (pasted.secret, pasted.secret[13:56], console_token):
        assert secret not in dump
        assert secret not in logs
    assert '"path": "/v1/files/svcx_sk_[redacted]"' in logs

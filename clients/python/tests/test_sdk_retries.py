"""Which answers the SDK retries, how long it waits, and that every attempt of one call carries
the same Idempotency-Key (so the service replays a conversion that did run instead of billing
it again). Against a real HTTP server on 127.0.0.1 that answers what each test scripts."""

from __future__ import annotations

import random
import socket
from typing import Any

import pytest
from scripted_server import Canned, Scripted, Sleeps, conversion, envelope, rate_limited
from svcx_client import (
    APIConnectionError,
    Client,
    DocumentError,
    InternalServerError,
    OverloadedError,
    RateLimitError,
    RetryPolicy,
)

PDF = b"%PDF-1.7 test body"


def client_for(server: Scripted, sleeps: Sleeps, **policy: Any) -> Client:
    return Client("svcx_sk_test_x", base_url=server.url, retry=RetryPolicy(**policy), sleep=sleeps)


def test_a_rate_limited_conversion_waits_retry_after_and_retries_with_the_same_idempotency_key(
    server: Scripted, sleeps: Sleeps
) -> None:
    server.answers = [
        rate_limited(
            "rate_limit_pages",
            retry_after_ms=2000,
            headers={"Retry-After": "2"},
        ),
        conversion(pages=2),
    ]

    result = client_for(server, sleeps).convert(PDF)

    assert [s.path for s in server.seen] == ["/v1/convert/raw", "/v1/convert/raw"]
    keys = [s.headers["idempotency-key"] for s in server.seen]
    assert keys[0] == keys[1]
    assert keys[0].startswith("svcx-py-")
    assert len(sleeps.waits) == 1
    assert 2.0 <= sleeps.waits[0] <= 2.2
    assert (result.pages_billed, result.credits_billed, [p.page for p in result.pages]) == (2, 2, [1, 2])
    assert server.seen[1].body == PDF


def test_each_call_has_its_own_idempotency_key_and_a_read_has_none(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [conversion(), conversion(), Canned(body=b'{"object": "list", "data": [], "has_more": false}')]
    client = client_for(server, sleeps)

    client.convert(PDF)
    client.convert(PDF, idempotency_key="job-42")
    client.ledger()

    first, second, read = server.seen
    assert first.headers["idempotency-key"].startswith("svcx-py-")
    assert second.headers["idempotency-key"] == "job-42"
    assert "idempotency-key" not in read.headers
    assert read.headers["authorization"] == "Bearer svcx_sk_test_x"


def test_overloaded_is_retried_with_capped_backoff_until_the_retries_are_spent(
    server: Scripted, sleeps: Sleeps
) -> None:
    server.answers = [envelope(503, "overloaded", "overloaded_error", retryable=True) for _ in range(4)]

    with pytest.raises(OverloadedError) as raised:
        client_for(server, sleeps, max_retries=3, backoff=1.0, max_backoff=3.0).account()

    assert len(server.seen) == 4
    assert (raised.value.status, raised.value.code, raised.value.attempts) == (503, "overloaded", 4)
    assert [0 <= wait <= ceiling for wait, ceiling in zip(sleeps.waits, [1.0, 2.0, 3.0], strict=True)] == [True] * 3


def test_an_error_that_is_not_retryable_is_raised_at_once_with_its_envelope(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [envelope(422, "pdf_invalid", "document_error", details={"reason": "no header"})]

    with pytest.raises(DocumentError) as raised:
        client_for(server, sleeps).convert(PDF)

    error = raised.value
    assert len(server.seen) == 1
    assert sleeps.waits == []
    assert (error.status, error.type, error.code, error.retryable) == (422, "document_error", "pdf_invalid", False)
    assert error.details == {"reason": "no header"}
    assert error.doc_url == "https://svcx.test/docs/errors/pdf_invalid"
    assert error.request_id == "req_test"
    assert error.envelope["error"]["message"] == "The pdf_invalid message."
    assert str(error) == "pdf_invalid: The pdf_invalid message. (HTTP 422, request req_test)"


def test_a_request_over_the_whole_limit_is_not_retried(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [
        rate_limited(
            "rate_limit_pages",
            details={"exceeds_limit": True},
            headers={"Retry-After": "60"},
        )
    ]

    with pytest.raises(RateLimitError):
        client_for(server, sleeps).convert(PDF)

    assert len(server.seen) == 1
    assert sleeps.waits == []


def test_a_retry_after_beyond_max_wait_is_raised_not_waited(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [rate_limited("rate_limit_requests", headers={"Retry-After": "600"})]

    with pytest.raises(RateLimitError):
        client_for(server, sleeps, max_wait=30).account()

    assert len(server.seen) == 1
    assert sleeps.waits == []


def test_a_dropped_connection_is_retried_with_the_same_idempotency_key(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [Canned(drop=True), conversion(pages=3)]

    result = client_for(server, sleeps).convert(PDF, pages="1-3")

    first, second = server.seen
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert first.query == second.query == {"pages": ["1-3"]}
    assert result.pages_billed == 3
    assert len(sleeps.waits) == 1


def test_no_answer_at_all_raises_a_connection_error_after_every_attempt(sleeps: Sleeps) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed again: nothing listens there
    client = Client("k", base_url=f"http://127.0.0.1:{port}", retry=RetryPolicy(max_retries=2), sleep=sleeps)

    with pytest.raises(APIConnectionError) as raised:
        client.account()

    assert raised.value.attempts == 3
    assert len(sleeps.waits) == 2


def test_a_gateway_error_without_an_envelope_is_retried_then_raised(server: Scripted, sleeps: Sleeps) -> None:
    bad_gateway = Canned(502, b"<html><body>502 Bad Gateway</body></html>", {"Content-Type": "text/html"})
    server.answers = [bad_gateway, bad_gateway]

    with pytest.raises(InternalServerError) as raised:
        client_for(server, sleeps, max_retries=1).account()

    assert len(server.seen) == 2
    assert (raised.value.status, raised.value.code) == (502, None)
    assert "502 Bad Gateway" in raised.value.message


def test_idempotency_in_progress_is_waited_for_beyond_max_retries(server: Scripted, sleeps: Sleeps) -> None:
    in_progress = envelope(
        409, "idempotency_in_progress", "invalid_request_error", retryable=True, headers={"Retry-After": "1"}
    )
    server.answers = [in_progress, in_progress, in_progress, conversion()]

    result = client_for(server, sleeps, max_retries=0).convert(PDF)

    assert result.pages_billed == 1
    assert len({s.headers["idempotency-key"] for s in server.seen}) == 1
    assert sleeps.waits == [1.0, 1.0, 1.0]


def test_a_requests_meter_at_zero_holds_the_next_request_until_it_resets(server: Scripted, sleeps: Sleeps) -> None:
    account = Canned(
        body=b'{"error": null}',
        headers={
            "Content-Type": "application/json",
            "x-ratelimit-limit-requests": "600",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "7",
        },
    )
    server.answers = [account, Canned(body=b"{}")]
    client = client_for(server, sleeps)

    client.health()
    assert client.rate_limits["requests"].remaining == 0
    client.health()

    assert len(sleeps.waits) == 1
    assert 6.0 < sleeps.waits[0] <= 7.0


def test_backoff_is_full_jitter_under_a_cap() -> None:
    policy = RetryPolicy(backoff=0.5, max_backoff=4.0)
    rng = random.Random(7)

    delays = [[policy.backoff_delay(retry, rng) for _ in range(200)] for retry in range(6)]

    for retry, drawn in enumerate(delays):
        ceiling = min(4.0, 0.5 * 2**retry)
        assert all(0 <= d <= ceiling for d in drawn)
        assert max(drawn) > 0.8 * ceiling  # spread over the whole range, not a fixed wait

"""The web worker's request reader (core.edge.RequestReader), fed bytes as the event loop
receives them: where a request ends, what it replays to gunicorn's parser, and what it refuses."""

from __future__ import annotations

import json

import pytest

from core.edge import BufferBudget, EdgeLimits, Refused, RequestReader

LIMITS = EdgeLimits(head_bytes=4096, body_bytes=1000, head_seconds=10, body_seconds=20, memory_bytes=64)


def replayed(reader: RequestReader) -> bytes:
    source = reader.request()
    data = b""
    while chunk := source.recv(7):
        data += chunk
    assert source.consumed()
    return data


def feed_bytewise(reader: RequestReader, data: bytes) -> None:
    for i in range(len(data)):
        reader.feed(data[i : i + 1], now=0.0)


def refusal(data: bytes, budget: BufferBudget | None = None) -> tuple[int, str]:
    with pytest.raises(Refused) as refused:
        RequestReader(LIMITS, budget or BufferBudget(10_000)).feed(data, now=0.0)
    head, _, body = refused.value.answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body)["error"]["code"]


@pytest.mark.parametrize(
    "framing",
    [b"Content-Length: 200\r\n\r\n", b"Transfer-Encoding: chunked\r\n\r\n"],
)
def test_a_request_fed_a_byte_at_a_time_ends_where_its_framing_says_and_replays_whole(framing: bytes) -> None:
    if b"chunked" in framing:
        body = b"64;ext=1\r\n" + b"a" * 100 + b"\r\n64\r\n" + b"b" * 100 + b"\r\n0\r\nX-Trailer: 1\r\n\r\n"
    else:
        body = b"a" * 100 + b"b" * 100  # past the 64 bytes kept in memory: spilled to a file
    request = b"\r\nPOST /v1/files HTTP/1.1\r\nHost: x\r\n" + framing + body
    following = b"GET /v1/health HTTP/1.1\r\n\r\n"
    reader = RequestReader(LIMITS, BufferBudget(10_000))

    feed_bytewise(reader, request + following)

    assert reader.complete
    assert replayed(reader) == request.removeprefix(b"\r\n")
    assert reader.leftover == following


def test_a_request_without_a_body_is_complete_at_its_blank_line_and_keeps_the_next_one() -> None:
    reader = RequestReader(LIMITS, BufferBudget(10_000))
    reader.feed(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n", now=5.0)

    assert reader.complete
    assert reader.started == 5.0
    assert replayed(reader) == b"GET /a HTTP/1.1\r\n\r\n"
    assert reader.leftover == b"GET /b HTTP/1.1\r\n"


def test_100_continue_is_due_only_while_the_body_is_awaited() -> None:
    waiting = RequestReader(LIMITS, BufferBudget(10_000))
    waiting.feed(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", now=0.0)
    eager = RequestReader(LIMITS, BufferBudget(10_000))
    eager.feed(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nab", now=0.0)

    assert waiting.continue_due is True
    assert waiting.continue_answer() == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert waiting.continue_due is False
    assert eager.continue_due is False


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nX-A: 1\r\n Content-Length: 3\r\n\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", (400, "bad_request")),
        (b"POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", (413, "file_too_large")),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n", (413, "file_too_large")),
        (b"GET / HTTP/1.1\r\nX-Big: " + b"x" * 5000, (400, "bad_request")),
    ],
)
def test_ambiguous_malformed_or_oversized_requests_are_refused_with_the_envelope(
    head: bytes, expected: tuple[int, str]
) -> None:
    assert refusal(head) == expected


def test_bodies_past_the_process_budget_are_503_and_closing_gives_the_budget_back() -> None:
    budget = BufferBudget(1500)
    first = RequestReader(LIMITS, budget)
    first.feed(b"POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", now=0.0)

    assert refusal(b"POST / HTTP/1.1\r\nContent-Length: 600\r\n\r\n", budget) == (503, "overloaded")
    first.close()
    assert budget.used == 0
    RequestReader(LIMITS, budget).feed(b"POST / HTTP/1.1\r\nContent-Length: 600\r\n\r\n", now=0.0)
    assert budget.used == 600


def test_the_deadline_is_the_heads_until_it_ends_then_the_bodys() -> None:
    reader = RequestReader(LIMITS, BufferBudget(10_000))
    assert reader.deadline is None  # nothing received: idle, not late

    reader.feed(b"POST / HTTP/1.1\r\n", now=100.0)
    assert reader.deadline == 110.0
    assert reader.expired(110.0)
    assert b'"request_timeout"' in reader.timeout_answer()
    assert b"request line and headers" in reader.timeout_answer()

    reader.feed(b"Content-Length: 5\r\n\r\n", now=104.0)
    assert reader.deadline == 124.0
    assert not reader.expired(123.9)
    assert b"request body did not arrive within 20 seconds" in reader.timeout_answer()

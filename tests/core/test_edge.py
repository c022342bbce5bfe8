"""The edge between the web server and the application (core.edge), on real sockets: the body
deadline, a client that left, and the server's own error answers."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.http import HttpRequest
from django.test import RequestFactory

from core.edge import body_deadline, client_gone, write_error
from core.errors import ErrorCode, ServiceError
from core.handlers import envelope

ROOT = Path(__file__).resolve().parents[2]


def tcp_pair() -> tuple[socket.socket, socket.socket]:
    """A connected loopback TCP pair (server side, client side): what gunicorn holds."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    return server, client


@pytest.fixture(params=["socketpair", "tcp"])
def pair(request: pytest.FixtureRequest) -> Iterator[tuple[socket.socket, socket.socket]]:
    server, client = socket.socketpair() if request.param == "socketpair" else tcp_pair()
    yield server, client
    server.close()
    client.close()


def _request(sock: socket.socket | None) -> HttpRequest:
    request = RequestFactory().post("/v1/convert", data=b"", content_type="application/pdf")
    if sock is not None:
        request.META["gunicorn.socket"] = sock
    return request


def test_the_deadline_ends_the_stream_of_a_client_that_keeps_trickling(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    # Given a client sending a byte every 50 ms: no single wait for bytes ever times out
    server, client = pair
    stop = threading.Event()

    def trickle() -> None:
        with contextlib.suppress(OSError):
            while not stop.wait(0.05):
                client.sendall(b"x")

    sender = threading.Thread(target=trickle, daemon=True)
    started = time.monotonic()
    received = 0
    sender.start()
    try:
        # When the reader loops under a deadline 0.5 s away
        with body_deadline(_request(server), started + 0.5) as watch:
            while True:
                watch.limit_wait(5)
                chunk = server.recv(1024)
                if not chunk:
                    break
                received += len(chunk)
                assert time.monotonic() - started < 5, "the stream was never cut"
    finally:
        stop.set()
        sender.join(timeout=5)
    elapsed = time.monotonic() - started

    # Then the stream ends at the deadline, and the edge says so
    assert watch.cut is True
    assert 0.5 <= elapsed < 2
    assert received > 0
    assert server.gettimeout() is None


def test_a_body_read_before_the_deadline_leaves_the_connection_readable(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    server, client = pair
    with body_deadline(_request(server), time.monotonic() + 0.3) as watch:
        watch.limit_wait(1)
        client.sendall(b"body")
        assert server.recv(1024) == b"body"
        assert watch.finish() is False

    assert server.gettimeout() is None
    time.sleep(0.6)  # well past the deadline
    assert waits_for_more(server)  # kept alive: nothing shut the reading side
    client.sendall(b"next request")
    assert server.recv(1024) == b"next request"
    assert watch.cut is False


def waits_for_more(server: socket.socket) -> bool:
    """Whether a read with nothing sent waits (an open stream) rather than ending at once (a
    reading side shut by the deadline)."""
    server.settimeout(0.2)
    try:
        return server.recv(1) != b""
    except TimeoutError:
        return True
    finally:
        server.settimeout(None)


def test_a_deadline_already_passed_cuts_at_once_and_finish_reports_it(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    server, _client = pair
    with body_deadline(_request(server), time.monotonic() - 1) as watch:
        watch.limit_wait(5)
        assert server.recv(1024) == b""  # the reader sees the end of the stream
        assert watch.finish() is True


def test_without_a_server_socket_the_deadline_does_nothing_and_no_client_is_gone() -> None:
    request = _request(None)
    with body_deadline(request, time.monotonic() - 1) as watch:
        watch.limit_wait(1)
        time.sleep(0.1)
    assert watch.cut is False
    assert client_gone(request) is False
    assert client_gone({"gunicorn.socket": "not a socket"}) is False


def test_client_gone_is_false_while_the_peer_is_connected_and_true_once_it_closes(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    server, client = pair
    request = _request(server)
    assert client_gone(request) is False

    client.sendall(b"x")  # a pipelined byte is seen, not consumed
    time.sleep(0.05)
    assert client_gone(request.META) is False
    assert server.recv(1) == b"x"
    assert server.gettimeout() is None

    client.close()
    time.sleep(0.05)
    assert client_gone(request) is True
    assert client_gone(request.META) is True
    assert server.gettimeout() is None


def _answer(status_int: int) -> tuple[bytes, dict[bytes, bytes], bytes]:
    """What the server writes for `status_int`, read from the other end of a socket pair."""
    server, client = socket.socketpair()
    with server, client:
        write_error(server, status_int, "Some Reason", "gunicorn's own text <b>")
        server.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := client.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    status_line, *lines = head.split(b"\r\n")
    headers = dict(line.split(b": ", 1) for line in lines)
    return status_line, headers, body


@pytest.mark.parametrize(
    ("status_int", "status_line", "code", "message"),
    [
        (400, b"HTTP/1.1 400 Bad Request", ErrorCode.BAD_REQUEST, "The HTTP request could not be parsed."),
        (403, b"HTTP/1.1 400 Bad Request", ErrorCode.BAD_REQUEST, "The HTTP request could not be parsed."),
        (
            414,
            b"HTTP/1.1 400 Bad Request",
            ErrorCode.URI_TOO_LONG,
            "The URL with its query string is too long for the server. Send long options in the body: "
            "multipart with an `options` part, or JSON with `file_id` and `options`.",
        ),
        (431, b"HTTP/1.1 400 Bad Request", ErrorCode.BAD_REQUEST, "The HTTP request could not be parsed."),
        (501, b"HTTP/1.1 400 Bad Request", ErrorCode.BAD_REQUEST, "The HTTP request could not be parsed."),
        (500, b"HTTP/1.1 500 Internal Server Error", ErrorCode.INTERNAL_ERROR, "An internal error occurred."),
    ],
)
def test_the_servers_own_error_answer_is_the_envelope(
    status_int: int, status_line: bytes, code: ErrorCode, message: str
) -> None:
    line, headers, body = _answer(status_int)

    assert line == status_line
    assert list(headers) == [b"Connection", b"Content-Type", b"X-Request-Id", b"Content-Length"]
    assert headers[b"Connection"] == b"close"
    assert headers[b"Content-Type"] == b"application/json"
    assert int(headers[b"Content-Length"]) == len(body)
    request_id = headers[b"X-Request-Id"].decode()
    expected = envelope(ServiceError(code, message, details={"http_status": status_int}), request_id)
    assert body == json.dumps(expected, separators=(",", ":")).encode()
    assert b"gunicorn" not in body


def test_each_answer_has_its_own_request_id() -> None:
    ids = {_answer(400)[1][b"X-Request-Id"] for _ in range(3)}
    assert len(ids) == 3


def test_the_answer_goes_out_before_django_settings_are_loaded() -> None:
    env = {name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"}
    program = "import sys\nfrom core.edge import error_answer\nsys.stdout.buffer.write(error_answer(431))\n"
    done = subprocess.run([sys.executable, "-c", program], env=env, cwd=ROOT, capture_output=True, timeout=60)

    assert done.returncode == 0, done.stderr.decode()
    head, _, body = done.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    error = json.loads(body)["error"]
    assert (error["code"], error["doc_url"], error["details"]) == (
        "bad_request",
        "/docs/errors/bad_request",
        {"http_status": 431},
    )

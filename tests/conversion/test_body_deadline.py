"""The upload deadline of `spool_body` on a real socket (through core.edge): a trickling body is
cut at the deadline and answered 408 `request_timeout`; a body read in time leaves the
connection open for the next request. The same behaviour through gunicorn is in
test_convert_limits.py."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.handlers.wsgi import WSGIRequest
from django.test import RequestFactory

from conversion.intake import spool_body
from core.errors import ErrorCode, ServiceError
from tests.core.test_edge import tcp_pair, waits_for_more


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    server, client = tcp_pair()
    with server, client:
        yield server, client


@pytest.fixture
def spool(settings: Any, tmp_path: Path) -> Path:
    settings.SVCX_SPOOL_DIR = tmp_path
    settings.SVCX_UPLOAD_DEADLINE_SECONDS = 1.0
    return tmp_path


def _request(server: socket.socket, length: int) -> WSGIRequest:
    """A request whose body is read from `server`, as the web server hands it to Django: like
    gunicorn's reader, a buffered read waits for all the bytes asked for or the end of the stream."""
    environ = dict(RequestFactory().post("/v1/convert", data=b"", content_type="application/pdf").environ)
    environ.update({"wsgi.input": server.makefile("rb"), "CONTENT_LENGTH": str(length), "gunicorn.socket": server})
    return WSGIRequest(environ)


def test_a_trickling_body_is_cut_at_the_deadline_and_is_408(
    pair: tuple[socket.socket, socket.socket], spool: Path
) -> None:
    server, client = pair
    stop = threading.Event()

    def trickle() -> None:  # for 5 s at most: a reader that is never cut then fails, not hangs
        with contextlib.suppress(OSError):
            until = time.monotonic() + 5
            while not stop.wait(0.05) and time.monotonic() < until:
                client.sendall(b"%PDF-")

    sender = threading.Thread(target=trickle, daemon=True)
    request = _request(server, 100_000)
    started = time.monotonic()
    sender.start()
    try:
        with pytest.raises(ServiceError) as raised:
            spool_body(request, limit=1_000_000)
    finally:
        stop.set()
        sender.join(timeout=5)

    assert raised.value.code == ErrorCode.REQUEST_TIMEOUT
    assert 1 <= time.monotonic() - started < 3
    assert list(spool.iterdir()) == []  # nothing left on disk
    assert server.gettimeout() is None


def test_a_body_read_in_time_keeps_the_connection_for_the_next_request(
    pair: tuple[socket.socket, socket.socket], spool: Path
) -> None:
    server, client = pair
    client.sendall(b"%PDF-1.7 fake")

    body = spool_body(_request(server, 13), limit=1_000_000)

    assert body.path.read_bytes() == b"%PDF-1.7 fake"
    assert server.gettimeout() is None
    time.sleep(1.5)  # past the deadline: the watch over the body has ended
    assert waits_for_more(server)
    client.sendall(b"GET /v1/health HTTP/1.1\r\n")
    assert server.recv(1024) == b"GET /v1/health HTTP/1.1\r\n"
    body.close()

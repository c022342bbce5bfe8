"""Slow and idle clients against the real web server (gunicorn with svcx's worker): connections
that trickle their headers or their body, or send nothing, hold no thread; GET /v1/health
answers at once while they are open, and each slow connection ends with the envelope at its
deadline. The same through nginx, with the committed deploy/nginx.conf, is in test_proxy.py."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pikepdf
import pytest

from conversion.models import StoredFile
from tests.conftest import WorkerProcess, start_web
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]

THREADS = 4  # per web process, two processes: 8 threads in all
DEADLINE_S = 3


@pytest.fixture(scope="module")
def slow_web(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with django_db_blocker.unblock():
        process, base = start_web(
            tmp_path_factory.mktemp("slow-web"),
            env={
                "WEB_THREADS": str(THREADS),
                "SVCX_HEADER_DEADLINE": f"{DEADLINE_S}s",
                "SVCX_UPLOAD_DEADLINE": f"{DEADLINE_S}s",
            },
        )
    yield base
    process.terminate()
    process.wait(timeout=20)


def address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def read_answer(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server writes until it closes (or `timeout` passes)."""
    sock.settimeout(timeout)
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def status_and_code(answer: bytes) -> tuple[int, str | None]:
    head, _, body = answer.partition(b"\r\n\r\n")
    if not head:
        return 0, None
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        decoded = b""
        while body:
            size_line, _, body = body.partition(b"\r\n")
            size = int(size_line, 16)
            decoded, body = decoded + body[:size], body[size + 2 :]
        body = decoded
    try:
        return status, json.loads(body)["error"]["code"]
    except (ValueError, KeyError):
        return status, None


def health_seconds(base: str) -> tuple[float, int]:
    """Seconds GET /v1/health takes on a new connection (at most 3), and its status (0: none)."""
    started = time.monotonic()
    with socket.create_connection(address(base), timeout=3) as sock:
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status, _ = status_and_code(read_answer(sock, 3))
    return time.monotonic() - started, status


class Trickler:
    """Connections to `base`: `each` send a header line at a time, `each` a body a few bytes at
    a time (after a head announcing 100 kB), `idle` nothing."""

    HEAD = "POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"

    def __init__(self, base: str, each: int, idle: int) -> None:
        self.headers = [socket.create_connection(address(base), timeout=5) for _ in range(each)]
        self.bodies = [socket.create_connection(address(base), timeout=5) for _ in range(each)]
        self.idle = [socket.create_connection(address(base), timeout=5) for _ in range(idle)]
        for sock in self.headers:
            sock.sendall(self.HEAD.encode())
        for sock in self.bodies:
            sock.sendall(f"{self.HEAD}Content-Length: 100000\r\n\r\n%PDF-".encode())

    def step(self, i: int) -> None:
        for sock in self.headers:
            with contextlib.suppress(OSError):
                sock.sendall(f"X-Slow-{i}: {i}\r\n".encode())
        for sock in self.bodies:
            with contextlib.suppress(OSError):
                sock.sendall(b"1.7 ")

    def close(self) -> None:
        for sock in self.headers + self.bodies + self.idle:
            sock.close()


def test_trickling_and_idle_connections_leave_health_answering_and_end_with_408(
    slow_web: str, session_worker: WorkerProcess
) -> None:
    # Given three times as many trickling connections of each kind as the server has threads
    slow = Trickler(slow_web, each=3 * 2 * THREADS, idle=2 * THREADS)
    try:
        latencies = []
        started = time.monotonic()
        for i in range(4):  # they trickle for 2 s, one piece every 0.5 s
            slow.step(i)
            time.sleep(0.5)
            # When another client asks for health meanwhile
            latencies.append(health_seconds(slow_web))
        trickled_for = time.monotonic() - started

        # Then it is answered at once, every time
        assert all(status == 200 for _, status in latencies), latencies
        assert max(seconds for seconds, _ in latencies) < 1.0, latencies
        assert trickled_for < DEADLINE_S  # the measures were taken while every slow connection was open

        # And each trickling connection, still trickling, is ended at its deadline with the envelope
        for i in range(4, 10):
            slow.step(i)
            time.sleep(0.5)
        answers = [status_and_code(read_answer(sock, 2)) for sock in slow.headers + slow.bodies]
        assert answers == [(408, "request_timeout")] * len(answers)
        # while a connection that never sent a byte is closed without an answer
        assert [read_answer(sock, 2) for sock in slow.idle] == [b""] * len(slow.idle)
    finally:
        slow.close()


def test_a_declared_body_above_the_largest_upload_is_413_before_any_byte_of_it(slow_web: str) -> None:
    with socket.create_connection(address(slow_web), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
            b"Content-Length: 99999999999\r\nExpect: 100-continue\r\n\r\n"
        )
        answer = read_answer(sock, 5)

    assert status_and_code(answer) == (413, "file_too_large")
    assert b"100 Continue" not in answer
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["details"] == {"limit_bytes": 128 * 1024 * 1024}


def test_expect_100_continue_is_answered_once_before_the_body(slow_web: str) -> None:
    body = b"%PDF-1.7 not really"
    with socket.create_connection(address(slow_web), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
            b"Content-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n" % len(body)
        )
        interim = sock.recv(1024)
        sock.sendall(body)
        answer = read_answer(sock, 5)

    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert b"100 Continue" not in answer
    assert status_and_code(answer) == (401, "missing_api_key"), answer


def test_pipelined_requests_on_one_connection_are_each_answered(slow_web: str, session_worker: WorkerProcess) -> None:
    with socket.create_connection(address(slow_web), timeout=5) as sock:
        sock.sendall(
            b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
            b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        answer = read_answer(sock, 5)

    statuses = [int(line.split(b" ", 2)[1]) for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    assert statuses == [200, 401, 200]


def test_a_chunked_upload_past_the_memory_buffer_is_stored_whole_and_the_next_request_answered(
    slow_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    # Given a 300 kB PDF (past the 64 KiB the loop keeps in memory) sent in chunks with an
    # extension and a trailer, and a request pipelined behind it
    path = tmp_path / "big.pdf"
    with pikepdf.new() as pdf:
        pdf.add_blank_page()
        pdf.pages[0].Contents = pdf.make_stream(os.urandom(300 * 1024))
        pdf.save(path, compress_streams=False)
    data = path.read_bytes()
    minted = make_key(make_org())
    parts = [data[i : i + 50_000] for i in range(0, len(data), 50_000)]
    body = b"".join(b"%x;part=1\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\nX-Trailer: 1\r\n\r\n"
    with socket.create_connection(address(slow_web), timeout=30) as sock:
        sock.sendall(
            b"POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nTransfer-Encoding: chunked\r\n"
            b"Authorization: Bearer %s\r\n\r\n%sGET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            % (minted.secret.encode(), body)
        )
        answer = read_answer(sock, 30)

    statuses = [int(line.split(b" ", 2)[1]) for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    assert statuses == [201, 200]
    assert StoredFile.objects.get().bytes == len(data)

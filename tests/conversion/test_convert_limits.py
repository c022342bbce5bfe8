"""Convert under pressure: the wall-clock limit, a lost worker, overload, a slow upload, a
client that leaves, each leaving no hold behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from billing.models import CreditHold, LedgerEntry
from billing.selectors import credits_get
from conversion.models import ConversionJob, StoredFile
from tests.conftest import REAL_PDFS, WorkerProcess, next_redis_database, start_web, start_worker
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope
from workers.heartbeat import worker_heartbeat

pytestmark = [pytest.mark.django_db(transaction=True)]
LONG_BOOK = REAL_PDFS / "pdfjs__freeculture.pdf"


def post_pdf(client: Client, secret: str, path: Path, query: str = "", **headers: Any) -> Any:
    return client.post(
        f"/v1/convert{query}", data=path.read_bytes(), content_type="application/pdf", **bearer(secret), **headers
    )


def limited_worker(tmp_path: Path, prefix: str) -> WorkerProcess:
    """A worker with a 2 s conversion limit, on queues no other worker reads."""
    return start_worker(
        tmp_path, queues=f"{prefix}convert,{prefix}convert_test", env={"SVCX_CONVERSION_TIME_LIMIT": "2s"}
    )


@pytest.fixture(scope="module")
def module_limited(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[WorkerProcess, str]]:
    """The module's limited worker and its queue prefix (tests using it need committed data)."""
    prefix = f"iso{time.monotonic_ns()}-"
    with django_db_blocker.unblock():
        worker = limited_worker(tmp_path_factory.mktemp("limited"), prefix)
    yield worker, prefix
    worker.stop()


@pytest.fixture
def isolated(settings: Any, module_limited: tuple[WorkerProcess, str]) -> WorkerProcess:
    """The module's limited worker; this process queues to it."""
    worker, settings.SVCX_QUEUE_PREFIX = module_limited
    return worker


@pytest.fixture
def isolated_to_kill(settings: Any, tmp_path: Path) -> Iterator[WorkerProcess]:
    """A limited worker of the test's own (the test kills it)."""
    settings.SVCX_QUEUE_PREFIX = prefix = f"iso{time.monotonic_ns()}-"
    worker = limited_worker(tmp_path, prefix)
    yield worker
    worker.stop()


@pytest.fixture(scope="module")
def deadline_web(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """gunicorn with a 2 s upload deadline, for the module's tests of raw uploads; its base URL."""
    with django_db_blocker.unblock():
        process, base = start_web(tmp_path_factory.mktemp("deadline-web"), env={"SVCX_UPLOAD_DEADLINE": "2s"})
    yield base
    process.terminate()
    process.wait(timeout=20)


def test_wall_clock_limit_is_504_with_pages_completed(client: Client, settings: Any, isolated: WorkerProcess) -> None:
    settings.SVCX_CONVERSION_TIME_LIMIT = 2
    org = make_org(credits=500)
    minted = make_key(org)

    response = post_pdf(client, minted.secret, LONG_BOOK, "?pages=1-200")

    error = assert_envelope(response, 504, "conversion_timeout")
    assert error["type"] == "timeout_error"
    assert 0 < error["details"]["pages_completed"] < 200
    assert credits_get(organization=org, environment="live").balance == 500
    assert not CreditHold.objects.filter(status="held").exists()
    assert not LedgerEntry.objects.filter(kind="capture").exists()


def test_a_killed_worker_is_500_and_releases_the_hold(
    client: Client, settings: Any, isolated_to_kill: WorkerProcess
) -> None:
    settings.SVCX_WORKER_LOST_AFTER = 3
    org = make_org(credits=500)
    minted = make_key(org)
    outcome: list[Any] = []

    def send() -> None:
        try:
            outcome.append(post_pdf(Client(), minted.secret, LONG_BOOK, "?pages=1-200"))
        finally:
            connection.close()

    sender = threading.Thread(target=send)
    sender.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not CreditHold.objects.filter(status="held").exists():
        time.sleep(0.05)
    assert CreditHold.objects.filter(status="held").exists()
    os.killpg(isolated_to_kill.process.pid, signal.SIGKILL)
    sender.join(timeout=60)

    error = assert_envelope(outcome[0], 500, "internal_error")
    assert error["retryable"] is True
    assert credits_get(organization=org, environment="live").held == 0
    assert credits_get(organization=org, environment="live").balance == 500


def test_a_worker_on_other_queues_is_no_worker_503_at_once(
    client: Client, settings: Any, session_worker: WorkerProcess, three_pages: Path
) -> None:
    settings.SVCX_QUEUE_PREFIX = f"unserved{time.monotonic_ns()}-"  # the session worker reads other queues
    minted = make_key(make_org(credits=10))

    started = time.monotonic()
    error = assert_envelope(post_pdf(client, minted.secret, three_pages), 503, "overloaded")

    assert error["details"]["reason"] == "no_live_workers"
    assert time.monotonic() - started < float(settings.SVCX_QUEUE_WAIT_LIMIT)  # refused, not queued
    assert not ConversionJob.objects.exists()
    assert not CreditHold.objects.exists()


def test_no_live_worker_is_503_overloaded(client: Client, settings: Any, three_pages: Path) -> None:
    minted = make_key(make_org(credits=10))
    settings.REDIS_URL = next_redis_database(settings.REDIS_URL)  # no worker announces itself there

    response = post_pdf(client, minted.secret, three_pages)

    error = assert_envelope(response, 503, "overloaded")
    assert error["retryable"] is True
    assert int(response["Retry-After"]) >= 1
    assert error["details"]["reason"] == "no_live_workers"
    assert not ConversionJob.objects.exists()


def test_a_full_queue_is_503_overloaded(
    client: Client, settings: Any, session_worker: WorkerProcess, three_pages: Path
) -> None:
    settings.SVCX_QUEUE_MAX_DEPTH = 0
    minted = make_key(make_org(credits=10))

    error = assert_envelope(post_pdf(client, minted.secret, three_pages), 503, "overloaded")

    assert error["details"]["reason"] == "queue_full"


def test_a_job_no_worker_takes_is_503_after_the_queue_wait(client: Client, settings: Any, three_pages: Path) -> None:
    prefix = f"busy{time.monotonic_ns()}-"
    settings.SVCX_QUEUE_PREFIX = prefix
    settings.SVCX_QUEUE_WAIT_LIMIT = 1
    # A worker that announces the queue but never takes from it: one busy with other work.
    worker_heartbeat(hostname="busy@localhost", queues=[f"{prefix}convert"])
    org = make_org(credits=10)
    minted = make_key(org)

    error = assert_envelope(post_pdf(client, minted.secret, three_pages), 503, "overloaded")

    assert error["details"]["reason"] == "queue_wait"
    assert ConversionJob.objects.get().status == "abandoned"
    assert not CreditHold.objects.exists()


def _raw_request(base: str, head: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(head.encode())
    return sock


def _read_response(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"chunked" in head.lower():
        decoded, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            decoded, rest = decoded + rest[:size], rest[size + 2 :]
        body = decoded
    return status, json.loads(body)


def test_a_body_slower_than_the_deadline_is_408_on_every_upload_endpoint(
    deadline_web: str, session_worker: WorkerProcess
) -> None:
    minted = make_key(make_org(credits=10))
    base = deadline_web
    outcomes = {}
    for path in ("/v1/convert", "/v1/files", "/v1/inspect", "/v1/toc"):
        sock = _raw_request(
            base,
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: 5000\r\n"
            f"Authorization: Bearer {minted.secret}\r\nConnection: close\r\n\r\n",
        )
        started = time.monotonic()
        for _ in range(3):  # a trickle, then silence
            sock.sendall(b"%PDF-")
            time.sleep(0.5)
        status, body = _read_response(sock)
        outcomes[path] = (status, body["error"]["code"], body["error"]["type"], time.monotonic() - started)

    for path, (status, code, type_, elapsed) in outcomes.items():
        assert (status, code, type_) == (408, "request_timeout", "timeout_error"), path
        assert elapsed < 10, path
    assert not ConversionJob.objects.exists()
    assert not StoredFile.objects.exists()


def test_a_body_that_keeps_trickling_is_cut_off_at_the_deadline(
    deadline_web: str, session_worker: WorkerProcess
) -> None:
    # Bytes keep coming, a few at a time: every wait for the next bytes is short, but the body
    # as a whole is late. The deadline counts from the first byte, not from the last.
    minted = make_key(make_org(credits=10))
    base = deadline_web
    cases = [
        ("/v1/convert", "Content-Length: 100000", b"%PDF-1.7 "),
        ("/v1/files", "Content-Length: 100000", b"%PDF-1.7 "),
        ("/v1/convert", "Transfer-Encoding: chunked", b"9\r\n%PDF-1.7 \r\n"),
    ]
    outcomes = {}
    for path, framing, piece in cases:
        sock = _raw_request(
            base,
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n{framing}\r\n"
            f"Authorization: Bearer {minted.secret}\r\nConnection: close\r\n\r\n",
        )
        answered = threading.Event()

        def trickle(sock: socket.socket = sock, answered: threading.Event = answered, piece: bytes = piece) -> None:
            with contextlib.suppress(OSError):
                while not answered.wait(0.1):
                    sock.sendall(piece)

        sender = threading.Thread(target=trickle, daemon=True)
        started = time.monotonic()
        sender.start()
        try:
            status, body = _read_response(sock)
        finally:
            answered.set()
            sender.join(timeout=5)
        outcomes[f"{path} {framing}"] = (status, body["error"]["code"], time.monotonic() - started)

    for case, (status, code, elapsed) in outcomes.items():
        assert (status, code) == (408, "request_timeout"), case
        assert elapsed < 8, case  # 2 s deadline; without the cut-off the body would take 20+ minutes
    assert not ConversionJob.objects.exists()
    assert not StoredFile.objects.exists()


def test_a_malformed_chunked_body_is_400_not_a_server_error(deadline_web: str) -> None:
    minted = make_key(make_org(credits=10))
    sock = _raw_request(
        deadline_web,
        "POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
        f"Transfer-Encoding: chunked\r\nAuthorization: Bearer {minted.secret}\r\nConnection: close\r\n\r\n"
        "zz\r\nabc\r\n0\r\n\r\n",
    )
    status, body = _read_response(sock)

    assert (status, body["error"]["code"]) == (400, "bad_request")
    assert not ConversionJob.objects.exists()


def test_a_client_that_leaves_has_its_job_abandoned_and_nothing_billed(
    tmp_path: Path, settings: Any, isolated: WorkerProcess
) -> None:
    org = make_org(credits=500)
    minted = make_key(org)
    pdf = LONG_BOOK.read_bytes()
    process, base = start_web(tmp_path, env={"SVCX_QUEUE_PREFIX": settings.SVCX_QUEUE_PREFIX})
    try:
        sock = _raw_request(
            base,
            "POST /v1/convert?pages=1-200 HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\n"
            f"Content-Length: {len(pdf)}\r\nAuthorization: Bearer {minted.secret}\r\n\r\n",
        )
        sock.sendall(pdf)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not ConversionJob.objects.filter(status="running").exists():
            time.sleep(0.05)
        sock.close()
        # The worker notices within a second, abandons the job and releases its hold.
        while time.monotonic() < deadline and not (
            ConversionJob.objects.filter(status="abandoned").exists()
            and not CreditHold.objects.filter(status="held").exists()
        ):
            time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=20)

    assert ConversionJob.objects.get().status == "abandoned"
    assert credits_get(organization=org, environment="live").balance == 500
    assert not CreditHold.objects.filter(status="held").exists()

"""The PDF password never passes through Redis (the broker, the cache) or a log in clear."""

from __future__ import annotations

import base64
import binascii
import logging
import re
import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pikepdf
import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from conversion.sealing import _cache_key, password_discard, password_open, password_seal
from core.errors import ServiceError
from tests.conftest import WorkerProcess
from tests.factories import bearer, make_key, make_org


class RedisMonitor:
    """Every command the Redis server runs, as MONITOR reports it, on a socket of its own."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.db = int(parts.path.strip("/") or 0)
        self.sock = socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=5)
        self.sock.sendall(b"MONITOR\r\n")
        assert self.sock.recv(5) == b"+OK\r\n"
        self.data = bytearray()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                return
            self.data += chunk

    def stop(self) -> list[bytes]:
        """The lines of this test's database (other databases may belong to other test runs)."""
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()
        return [line for line in bytes(self.data).split(b"\r\n") if f" [{self.db} ".encode() in line]


def readable(lines: list[bytes]) -> bytes:
    """The lines, plus every base64 run in them decoded (kombu sends message bodies in base64)."""
    text = b"\n".join(lines)
    decoded = []
    for run in re.findall(rb"[A-Za-z0-9+/]{16,}={0,2}", text):
        try:
            decoded.append(base64.b64decode(run + b"=" * (-len(run) % 4)))
        except (binascii.Error, ValueError):
            continue
    return text + b"\n" + b"\n".join(decoded)


@pytest.fixture
def monitor() -> Iterator[RedisMonitor]:
    watcher = RedisMonitor(settings.REDIS_URL)
    yield watcher
    watcher.stopped.set()


@pytest.mark.django_db(transaction=True)
def test_a_password_protected_pdf_converts_without_its_password_in_redis_or_a_log(
    client: Client,
    session_worker: WorkerProcess,
    monitor: RedisMonitor,
    three_pages: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    password = "pw" + secrets.token_hex(12)
    locked = tmp_path / "locked.pdf"
    with pikepdf.open(three_pages) as pdf:
        pdf.save(locked, encryption=pikepdf.Encryption(user=password, owner=password + "-owner", R=6))
    worker_log_before = session_worker.log.read_bytes()
    caplog.set_level(logging.DEBUG)

    response = client.post(
        "/v1/convert?pages=1",
        data=locked.read_bytes(),
        content_type="application/pdf",
        HTTP_X_SVCX_PDF_PASSWORD=password,
        **bearer(make_key(make_org(credits=10)).secret),
    )
    traffic = readable(monitor.stop())

    assert response.status_code == 200, response.content
    assert "Alpha text" in response.json()["pages"][0]["markdown"]
    request_id = response["X-Request-Id"].encode()
    # The monitor saw the job go by: the message (its body decoded), the sealed password's
    # key set by the web side, read and deleted by the worker.
    assert b"conversion.convert" in traffic
    assert b'[["' + request_id + b'", true]' in traffic
    assert re.search(rb'"SET" "[^"]*svcx:job-password:', traffic)
    assert re.search(rb'"GET" "[^"]*svcx:job-password:', traffic)
    assert re.search(rb'"DEL" "[^"]*svcx:job-password:', traffic)
    assert password.encode() not in traffic
    assert password.encode() not in session_worker.log.read_bytes()[len(worker_log_before) :]
    assert password not in caplog.text
    assert all(password not in repr(record.__dict__) for record in caplog.records)


def test_a_sealed_password_opens_only_for_its_job_and_is_gone_once_discarded(db: None) -> None:
    password_seal(request_id="req_one", password="s3cret ünïcode")
    # The sealed bytes moved under another job's key do not open there (bound to the request id).
    cache.set(_cache_key("req_two"), cache.get(_cache_key("req_one")))

    assert password_open(request_id="req_one") == "s3cret ünïcode"
    with pytest.raises(ServiceError) as other:
        password_open(request_id="req_two")
    password_discard(request_id="req_one")
    password_discard(request_id="req_two")
    with pytest.raises(ServiceError) as discarded:
        password_open(request_id="req_one")

    assert other.value.code == discarded.value.code == "internal_error"


def test_a_password_sealed_under_another_secret_does_not_open(settings: Any) -> None:
    settings.SVCX_JOB_SECRET = "the web side's secret"
    password_seal(request_id="req_keyed", password="s3cret")
    settings.SVCX_JOB_SECRET = "another secret"

    with pytest.raises(ServiceError) as refused:
        password_open(request_id="req_keyed")

    assert refused.value.code == "internal_error"
    password_discard(request_id="req_keyed")

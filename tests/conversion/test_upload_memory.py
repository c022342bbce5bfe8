"""A 120 MiB upload to /v1/files is streamed: the web process's peak memory stays far below it."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pikepdf
import pytest

from conversion.models import StoredFile
from tests.conftest import WorkerProcess, start_web
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def test_large_upload_does_not_grow_the_web_process(tmp_path: Path, session_worker: WorkerProcess) -> None:
    big = tmp_path / "big.pdf"
    with pikepdf.new() as pdf:
        pdf.add_blank_page()
        # Incompressible bytes in an unfiltered stream: the file is as large as its payload.
        pdf.pages[0].Contents = pdf.make_stream(os.urandom(120 * 1024 * 1024))
        pdf.save(big, compress_streams=False)
    size = big.stat().st_size
    minted = make_key(make_org())
    process, base = start_web(tmp_path, env={"WEB_CONCURRENCY": "1", "SVCX_UPLOAD_DEADLINE": "60s"})
    try:
        workers = _children(process.pid)
        before = max(_peak_rss_kib(pid) for pid in workers)
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=120) as sock, big.open("rb") as handle:
            sock.sendall(
                f"POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: {size}\r\n"
                f"Authorization: Bearer {minted.secret}\r\nConnection: close\r\n\r\n".encode()
            )
            while chunk := handle.read(1024 * 1024):
                sock.sendall(chunk)
            reply = b""
            while data := sock.recv(65536):
                reply += data
        after = max(_peak_rss_kib(pid) for pid in workers)
    finally:
        process.terminate()
        process.wait(timeout=20)

    assert reply.startswith(b"HTTP/1.1 201"), reply[:300]
    assert StoredFile.objects.get().bytes == size
    growth_mib = (after - before) / 1024
    assert growth_mib < 32, f"web process peak grew by {growth_mib:.0f} MiB for a {size / 2**20:.0f} MiB upload"

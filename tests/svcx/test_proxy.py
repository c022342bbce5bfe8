"""The production topology on loopback: nginx with the committed deploy/nginx.conf in front of a
real gunicorn. Slow and idle clients are held by nginx (health answers at once) and closed
when they stall; nginx's own refusals are the envelope; the application sees the
client's address, forwarded by the proxy and believed from it only. Skipped without nginx."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.nginx import NGINX, start_nginx
from tests.conftest import WorkerProcess, free_port, start_web
from tests.factories import make_key, make_org
from tests.svcx.test_slow_clients import THREADS, Trickler, address, health_seconds, read_answer, status_and_code

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not NGINX.exists(), reason=f"nginx is not installed at {NGINX} (apt-get install nginx)"),
]

STALL_S = 10  # client_header_timeout and client_body_timeout in deploy/nginx.conf


@pytest.fixture(scope="module")
def proxied(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(the proxy's base URL, gunicorn's base URL)."""
    with django_db_blocker.unblock():
        web, web_base = start_web(
            tmp_path_factory.mktemp("proxied-web"),
            env={"WEB_THREADS": str(THREADS), "SVCX_TRUSTED_PROXY_HEADER": "X-Forwarded-For"},
        )
    port = free_port()
    proxy = start_nginx(tmp_path_factory.mktemp("nginx"), web_base.removeprefix("http://"), port)
    yield f"http://127.0.0.1:{port}", web_base
    proxy.terminate()
    proxy.wait(timeout=10)
    web.terminate()
    web.wait(timeout=20)


def get(base: str, path: str, secret: str, source: str, forwarded: str | None = None) -> tuple[int, str | None]:
    """GET `path` from the local address `source`, with an optional X-Forwarded-For."""
    with socket.create_connection(address(base), timeout=5, source_address=(source, 0)) as sock:
        extra = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n{extra}Connection: close\r\n\r\n".encode()
        )
        return status_and_code(read_answer(sock, 5))


def test_slow_clients_are_held_by_the_proxy_and_closed_when_they_stall(
    proxied: tuple[str, str], session_worker: WorkerProcess
) -> None:
    base, _ = proxied
    slow = Trickler(base, each=3 * 2 * THREADS, idle=2 * THREADS)
    try:
        latencies = []
        for i in range(4):
            slow.step(i)
            time.sleep(0.5)
            latencies.append(health_seconds(base))
        assert all(status == 200 for _, status in latencies), latencies
        assert max(seconds for seconds, _ in latencies) < 1.0, latencies

        # When they stop sending, each is closed at the proxy's timeout (nginx writes no answer
        # to a request it gave up reading; its log says 408)
        started = time.monotonic()
        ends = [read_answer(sock, STALL_S + 5) for sock in slow.headers + slow.bodies + slow.idle]
        assert ends == [b""] * len(ends)
        assert STALL_S - 1 < time.monotonic() - started < STALL_S + 5
    finally:
        slow.close()


def test_the_proxy_refuses_a_body_above_the_largest_upload_with_the_envelope(proxied: tuple[str, str]) -> None:
    base, _ = proxied
    with socket.create_connection(address(base), timeout=5) as sock:
        sock.sendall(b"POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Length: 200000000\r\n\r\n")
        answer = read_answer(sock, 5)

    assert status_and_code(answer) == (413, "file_too_large")
    error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
    assert error["details"]["limit_bytes"] == 128 * 1024 * 1024
    assert error["request_id"].startswith("req_")


def test_the_proxy_says_a_url_is_too_long_in_the_envelope(proxied: tuple[str, str]) -> None:
    base, _ = proxied
    with socket.create_connection(address(base), timeout=5) as sock:
        sock.sendall(b"POST /v1/convert/raw?pages=" + b"1," * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = read_answer(sock, 5)

    assert status_and_code(answer) == (400, "uri_too_long")
    error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
    assert error["details"]["http_status"] == 414
    assert "in the body" in error["message"]


def test_an_unreachable_web_tier_is_503_in_the_envelope(tmp_path: Path) -> None:
    port = free_port()
    proxy = start_nginx(tmp_path, f"127.0.0.1:{free_port()}", port)  # nothing listens upstream
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = read_answer(sock, 5)
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)

    assert status_and_code(answer) == (503, "service_unavailable")
    assert b"\r\nRetry-After: 5\r\n" in answer


def test_the_application_sees_the_clients_address_through_the_proxy_only(proxied: tuple[str, str]) -> None:
    # The client connects from 127.0.0.2; nginx (and so gunicorn's peer) is 127.0.0.1.
    base, web_base = proxied
    client_only = make_key(make_org(), ip_allowlist=["127.0.0.2/32"])
    proxy_only = make_key(make_org(), ip_allowlist=["127.0.0.1/32"])

    assert get(base, "/v1/account", client_only.secret, "127.0.0.2")[0] == 200
    assert get(base, "/v1/account", proxy_only.secret, "127.0.0.2") == (403, "ip_not_allowed")
    # A forwarded header written by the client is replaced by the proxy
    assert get(base, "/v1/account", proxy_only.secret, "127.0.0.2", forwarded="127.0.0.1") == (403, "ip_not_allowed")
    # and is ignored from a peer that is not a trusted proxy
    assert get(web_base, "/v1/account", client_only.secret, "127.0.0.3", forwarded="127.0.0.2") == (
        403,
        "ip_not_allowed",
    )

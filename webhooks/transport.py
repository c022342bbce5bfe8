"""One POST of a webhook to a checked target (webhooks.guard): to the checked addresses only,
over TLS verified for the URL's host name when https, never following a redirect, within the
connect and read timeouts, keeping only a short prefix of the answer."""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from webhooks.guard import Target

# Bytes of the answer read; characters of it kept.
RESPONSE_READ_BYTES = 1024
RESPONSE_KEPT_CHARS = 256


@dataclass(frozen=True)
class Answer:
    """What came back: a status and a prefix of the body, or the error that stopped the attempt."""

    status: int | None
    body_prefix: str
    error: str
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def _pinned_socket(address: str, port: int, *, connect_timeout: float, read_timeout: float) -> socket.socket:
    sock = socket.create_connection((address, port), timeout=connect_timeout)
    sock.settimeout(read_timeout)
    return sock


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to `address`, one of the checked addresses, whatever the host name resolves to now."""

    def __init__(self, target: Target, address: str, *, connect_timeout: float, read_timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=read_timeout)
        self.pinned = (address, target.port, connect_timeout, read_timeout)

    def connect(self) -> None:
        address, port, connect_timeout, read_timeout = self.pinned
        self.sock = _pinned_socket(address, port, connect_timeout=connect_timeout, read_timeout=read_timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """The same over TLS: the certificate is verified for the URL's host name (SNI carries it)."""

    def __init__(self, target: Target, address: str, *, connect_timeout: float, read_timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(target.host, target.port, timeout=read_timeout, context=self.tls)
        self.pinned = (address, target.port, connect_timeout, read_timeout)

    def connect(self) -> None:
        address, port, connect_timeout, read_timeout = self.pinned
        raw = _pinned_socket(address, port, connect_timeout=connect_timeout, read_timeout=read_timeout)
        try:
            self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not valid: {exc.verify_message}"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the connection closed without an answer"
    return f"{type(exc).__name__}: {exc}"[:300]


def _cut(connection: http.client.HTTPConnection) -> None:
    """Unblock a read that ran past the attempt's time: the socket is shut down under it."""
    if connection.sock is not None:
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def post(
    target: Target, *, body: bytes, headers: dict[str, str], connect_timeout: float, read_timeout: float
) -> Answer:
    """POST `body` to `target`, trying its checked addresses in turn until one connects. The
    whole attempt, from the first connection to the last byte read, ends within `connect_timeout`
    plus `read_timeout` (a peer trickling its answer is cut off then)."""
    started = time.monotonic()
    deadline = started + connect_timeout + read_timeout
    error = "no address to connect to"
    for address in target.addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            return Answer(None, "", "timed out", _ms(started))
        kind = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
        connection = kind(
            target, address, connect_timeout=min(connect_timeout, left), read_timeout=min(read_timeout, left)
        )
        cutoff = threading.Timer(left, _cut, args=(connection,))
        cutoff.daemon = True
        cutoff.start()
        try:
            try:
                connection.connect()
            except OSError as exc:
                error = _error_text(exc)
                continue  # the next checked address, if any
            connection.request("POST", target.path, body=body, headers=headers)
            response = connection.getresponse()
            prefix = response.read(RESPONSE_READ_BYTES).decode("utf-8", "replace")[:RESPONSE_KEPT_CHARS]
            return Answer(response.status, prefix, "", _ms(started))
        except (OSError, http.client.HTTPException) as exc:
            late = time.monotonic() >= deadline
            return Answer(None, "", "timed out" if late else _error_text(exc), _ms(started))
        finally:
            cutoff.cancel()
            connection.close()
    return Answer(None, "", error, _ms(started))

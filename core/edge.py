"""The edge between the web server (gunicorn) and the application: the only code that knows
about the client's socket.

- `body_deadline`: the total deadline of a request body, enforced on the socket;
- `client_gone`: whether the client closed its connection;
- `write_error`: the server's own answer to a request it refuses before Django sees it, written
  as the error envelope by `core.handlers.envelope`, like every other error answer.

Outside gunicorn (the test client, the embedded server) a request has no server socket: the
deadline is then only checked between reads, and a client is never seen to leave.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from http import HTTPStatus
from typing import Any

from gunicorn import util

from core.errors import ErrorCode, ServiceError
from core.handlers import envelope
from core.ids import new_request_id

# Where gunicorn puts the client's socket in the WSGI environ.
_SOCKET_KEY = "gunicorn.socket"


def server_socket(request_or_meta: Any) -> socket.socket | None:
    """The client's socket under the request (an HttpRequest, a DRF Request or its META), or None."""
    meta: Mapping[str, Any] = getattr(request_or_meta, "META", request_or_meta)
    sock = meta.get(_SOCKET_KEY)
    return sock if isinstance(sock, socket.socket) else None


class BodyDeadline:
    """At the deadline, end the body stream of a client that still trickles bytes.

    A socket timeout only bounds each wait for the next bytes; a client sending a few bytes a
    second keeps the server's reader looping for as long as it likes. Shutting the reading side
    makes that reader see the end of the stream; the response can still be written. `finish`
    guarantees that no shutdown happens after it returns, so a body read in time is never cut
    (the connection may be kept alive for the next request). Without a socket it does nothing."""

    def __init__(self, sock: socket.socket | None, deadline: float) -> None:
        self._sock = sock
        self._lock = threading.Lock()
        self._done = False
        self._cut = False
        self._timer: threading.Timer | None = None
        if sock is not None:
            self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
            self._timer.daemon = True
            self._timer.start()

    @property
    def cut(self) -> bool:
        """Whether the deadline shut the stream (final once `finish` has returned)."""
        return self._cut

    def limit_wait(self, seconds: float) -> None:
        """Bound the next wait for bytes to `seconds` (> 0): a stalled client must not hold a
        thread past the deadline."""
        if self._sock is not None:
            self._sock.settimeout(seconds)

    def _fire(self) -> None:
        with self._lock:
            if self._done or self._sock is None:
                return
            self._cut = True
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RD)

    def finish(self) -> bool:
        """Stop watching and make the socket blocking again; True when the deadline had already
        cut the stream."""
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.settimeout(None)
        return self._cut


@contextlib.contextmanager
def body_deadline(request_or_meta: Any, deadline: float) -> Iterator[BodyDeadline]:
    """Watch the body of this request until the block ends; `deadline` is a `time.monotonic()`
    instant. The yielded object says whether the deadline cut the stream (`cut`)."""
    watch = BodyDeadline(server_socket(request_or_meta), deadline)
    try:
        yield watch
    finally:
        watch.finish()


def client_gone(request_or_meta: Any) -> bool:
    """Whether the client closed its connection (a peek at the socket, when there is one)."""
    sock = server_socket(request_or_meta)
    if sock is None:
        return False
    try:
        sock.settimeout(0)
        data = sock.recv(1, socket.MSG_PEEK)
        return data == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
    finally:
        with contextlib.suppress(OSError):
            sock.settimeout(None)


def refusal(status_int: int) -> ServiceError:
    """The error for a request the web server refused with `status_int` (a malformed request
    line, oversized headers, a bad chunk: 400, 403, 414, 417, 431, 501) or failed on (500).
    The server's own status is kept in `details.http_status`."""
    details = {"http_status": status_int}
    if status_int == 500:
        return ServiceError(ErrorCode.INTERNAL_ERROR, details=details)
    return ServiceError(ErrorCode.BAD_REQUEST, "The HTTP request could not be parsed.", details=details)


def error_answer(status_int: int) -> bytes:
    """The whole HTTP answer (head and body) for `refusal(status_int)`; the connection closes."""
    error = refusal(status_int)
    request_id = new_request_id()
    body = json.dumps(envelope(error, request_id), separators=(",", ":")).encode()
    status = error.spec.status
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        f"Connection: close\r\nContent-Type: application/json\r\nX-Request-Id: {request_id}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin1")
    return head + body


def write_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error`, answering with the envelope instead of an HTML page
    (installed by the worker class in svcx.gunicorn_worker)."""
    util.write_nonblock(sock, error_answer(status_int))

"""The edge between the web server (gunicorn) and the application: the only code that knows
about the client's socket.

- `body_deadline`: the total deadline of a request body, enforced on the socket;
- `client_gone`: whether the client closed its connection;
- `write_error`: the server's own answer to a request it refuses before Django sees it, written
  as the error envelope by `core.handlers.envelope`, like every other error answer;
- `RequestReader`: one HTTP/1.1 request read off a non-blocking socket by the web worker's event
  loop (svcx.gunicorn_worker), head and body buffered, under the header and body deadlines, so a
  slow or idle client costs a buffer and never a thread.

Outside gunicorn (the test client, the embedded server) a request has no server socket: the
deadline is then only checked between reads, and a client is never seen to leave.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import socket
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
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
    The server's own status is kept in `details.http_status`; the answer's status is 400, the
    status of every request-shape error (interface.md 7.2 lists no 414 or 431), and a request
    line too long has a code of its own (`uri_too_long`) saying where long options go."""
    details = {"http_status": status_int}
    if status_int == 500:
        return ServiceError(ErrorCode.INTERNAL_ERROR, details=details)
    if status_int == 414:
        return ServiceError(
            ErrorCode.URI_TOO_LONG,
            "The URL with its query string is too long for the server. Send long options in the body: "
            "multipart with an `options` part, or JSON with `file_id` and `options`.",
            details=details,
        )
    return ServiceError(ErrorCode.BAD_REQUEST, "The HTTP request could not be parsed.", details=details)


def body_timeout(seconds: float) -> ServiceError:
    """408 `request_timeout`: a request body did not arrive within `seconds` of its start."""
    whole = int(seconds)
    return ServiceError(
        ErrorCode.REQUEST_TIMEOUT,
        f"The request body did not arrive within {whole} seconds. On a slow link, upload once with "
        "POST /v1/files and convert by file_id.",
        details={"deadline_seconds": whole},
    )


def head_timeout(seconds: float) -> ServiceError:
    """408 `request_timeout`: the request line and headers did not arrive within `seconds`."""
    whole = int(seconds)
    return ServiceError(
        ErrorCode.REQUEST_TIMEOUT,
        f"The request line and headers did not arrive within {whole} seconds of their first byte.",
        details={"deadline_seconds": whole},
    )


def body_too_large(limit: int) -> ServiceError:
    """413 `file_too_large`: a body larger than the largest one any endpoint accepts."""
    return ServiceError(
        ErrorCode.FILE_TOO_LARGE,
        f"The request body is larger than {limit // (1024 * 1024)} MiB, the largest upload accepted.",
        details={"limit_bytes": limit},
    )


def edge_overloaded() -> ServiceError:
    """503 `overloaded`: the web process holds as many buffered bodies as it may."""
    return ServiceError(
        ErrorCode.OVERLOADED,
        "The web server is holding as many uploads as it can; retry shortly.",
        details={"reason": "upload_buffers"},
        retry_after_ms=5000,
    )


def error_answer(status_int: int) -> bytes:
    """The whole HTTP answer (head and body) for `refusal(status_int)`; the connection closes."""
    return service_error_answer(refusal(status_int))


def service_error_answer(error: ServiceError) -> bytes:
    """The whole HTTP answer (head and body) for `error`, written by the server itself; the
    connection closes."""
    request_id = new_request_id()
    body = json.dumps(envelope(error, request_id), separators=(",", ":")).encode()
    status = error.spec.status
    retry = f"Retry-After: {error.retry_after_ms // 1000}\r\n" if error.retry_after_ms else ""
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        f"Connection: close\r\nContent-Type: application/json\r\nX-Request-Id: {request_id}\r\n"
        f"{retry}Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin1")
    return head + body


def write_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's `util.write_error`, answering with the envelope instead of an HTML page
    (installed by the worker class in svcx.gunicorn_worker)."""
    util.write_nonblock(sock, error_answer(status_int))


# The event loop's reader -----------------------------------------------------------------

# A chunk-size line, a trailer line: longer is not a request a client means.
_LINE_LIMIT = 4096
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
# The header fields that frame a request (RFC 9112 6), found in a head as one C-level scan.
_FRAMING_FIELD = re.compile(rb"\r\n(content-length|transfer-encoding|expect)[ \t]*:([^\r\n]*)", re.IGNORECASE)


@dataclass(frozen=True)
class EdgeLimits:
    """What one request may take before a thread sees it."""

    head_bytes: int  # the request line and headers together
    body_bytes: int  # the largest body any endpoint accepts (its raw bytes, chunk framing included)
    head_seconds: float  # from the request's first byte to the end of its headers
    body_seconds: float  # from the end of the headers to the end of the body
    memory_bytes: int = 64 * 1024  # a body is kept in memory up to this, in an unlinked file beyond
    spool_dir: str | None = None


class BufferBudget:
    """The bytes every body buffered by one web process may take together (memory and disk);
    used by the event loop's thread only."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, size: int) -> bool:
        if self.used + size > self.limit:
            return False
        self.used += size
        return True

    def give(self, size: int) -> None:
        self.used -= size


class Refused(Exception):
    """The request is answered by the server itself (`answer`, the envelope) and the connection
    closes."""

    def __init__(self, answer: bytes) -> None:
        super().__init__(answer[:40])
        self.answer = answer


class BufferedRequest:
    """One complete request (head and body, as the client framed it) for gunicorn's parser,
    which reads it with `recv` as it would read a socket."""

    def __init__(self, head: bytes, memory: bytes, spill: Any) -> None:
        self._parts = [head, memory] if memory else [head]
        self._spill = spill
        self.exhausted = False

    def recv(self, size: int) -> bytes:
        while self._parts:
            part = self._parts[0]
            if len(part) <= size:
                self._parts.pop(0)
                if part:
                    return part
                continue
            self._parts[0] = part[size:]
            return part[:size]
        if self._spill is not None:
            data = self._spill.read(size)
            if data:
                return bytes(data)
        self.exhausted = True
        return b""

    def consumed(self) -> bool:
        """Whether nothing of the request is left unread (gunicorn framed it as the reader did)."""
        if self._parts:
            return False
        if self._spill is None:
            return True
        at = self._spill.tell()
        return bool(self._spill.seek(0, io.SEEK_END) == at)


class RequestReader:
    """One HTTP/1.x request, fed the bytes the event loop receives: the head up to its blank
    line, then the body its framing announces (Content-Length or chunked), kept in memory up to
    `limits.memory_bytes` and in an unlinked temporary file beyond.

    Refuses (raises `Refused` with the envelope answer) a head over `limits.head_bytes`,
    ambiguous framing, a declared or received body over `limits.body_bytes`, malformed chunk
    framing, and a body the process's `BufferBudget` cannot hold. The deadlines are the event
    loop's to check (`deadline`, `timeout_answer`). gunicorn parses the complete request again in
    the thread; the reader only decides where it ends, and the worker closes the connection when
    gunicorn ends it elsewhere."""

    def __init__(self, limits: EdgeLimits, budget: BufferBudget) -> None:
        self.limits = limits
        self._budget = budget
        self._taken = 0
        self._head = bytearray()
        self._head_end = 0
        self._memory = bytearray()
        self._spill: Any = None
        self._left = 0  # Content-Length bytes still to come
        self._chunked = False
        self._state = "size"  # chunked: size, data, data_end, trailer
        self._chunk_left = 0
        self._decoded = 0
        self._line = bytearray()
        self.started: float | None = None  # the request's first byte
        self.deadline: float | None = None
        self.complete = False
        self.continue_due = False  # an `Expect: 100-continue` the loop has to answer once
        self.leftover = b""  # bytes of the next (pipelined) request

    # -- feeding

    def feed(self, data: bytes, now: float) -> None:
        if self.complete:
            self.leftover += data
            return
        if not self._head_end:
            data = self._feed_head(data, now)
            if self.complete:
                self.leftover = data
            if not self._head_end or self.complete:
                return
        if self._chunked:
            used = self._scan_chunks(data)
        else:
            used = min(self._left, len(data))
            self._left -= used
            self.complete = self._left == 0
        if used:
            self._store(data[:used] if used < len(data) else data)
            self.continue_due = False  # the client sends the body already (RFC 9110 10.1.1)
        if self.complete:
            self.leftover = data[used:]

    def _feed_head(self, data: bytes, now: float) -> bytes:
        if self.started is None:
            data = data.lstrip(b"\r\n")  # blank lines before a request line are ignored (RFC 9112 2.2)
            if not data:
                return b""
            self.started = now
            self.deadline = now + self.limits.head_seconds
        searched = max(0, len(self._head) - 3)
        if self._head:
            self._head += data
        else:
            self._head = bytearray(data)
        end = self._head.find(b"\r\n\r\n", searched)
        if end < 0:
            if len(self._head) > self.limits.head_bytes:
                raise Refused(error_answer(431))
            return b""
        end += 4
        if end > self.limits.head_bytes:
            raise Refused(error_answer(431))
        rest = bytes(self._head[end:])
        del self._head[end:]
        self._head_end = end
        self._framing(now)
        return rest

    def _framing(self, now: float) -> None:
        head = bytes(self._head)
        if b"\r\n " in head or b"\r\n\t" in head:
            raise Refused(error_answer(400))  # obsolete line folding
        lengths: list[bytes] = []
        codings: list[bytes] = []
        expect = b""
        for name, value in _FRAMING_FIELD.findall(head):
            name = name.lower()
            if name == b"content-length":
                lengths.append(value.strip(b" \t"))
            elif name == b"transfer-encoding":
                codings.append(value.strip(b" \t").lower())
            else:
                expect = value.strip(b" \t").lower()
        if len(lengths) > 1 or (lengths and codings):
            raise Refused(error_answer(400))
        if codings:
            if codings != [b"chunked"]:
                raise Refused(error_answer(501))
            self._chunked = True
        elif lengths:
            if not lengths[0].isdigit() or not lengths[0].isascii():
                raise Refused(error_answer(400))
            self._left = int(lengths[0])
            if self._left > self.limits.body_bytes:
                raise Refused(service_error_answer(body_too_large(self.limits.body_bytes)))
            # The whole declared body is reserved now: an upload accepted is never cut halfway.
            self._reserve(self._left)
        if not self._chunked and not self._left:
            self.complete = True
            return
        self.deadline = now + self.limits.body_seconds
        self.continue_due = expect == b"100-continue" and not head.split(b"\r\n", 1)[0].endswith(b"HTTP/1.0")

    def _reserve(self, size: int) -> None:
        if not self._budget.take(size):
            raise Refused(service_error_answer(edge_overloaded()))
        self._taken += size

    def _scan_chunks(self, data: bytes) -> int:
        """How many bytes of `data` belong to the chunked body (all, unless it ended)."""
        at, size = 0, len(data)
        while at < size and not self.complete:
            if self._state == "data":
                step = min(self._chunk_left, size - at)
                at += step
                self._chunk_left -= step
                if not self._chunk_left:
                    self._state = "data_end"
                continue
            newline = data.find(b"\n", at)
            if newline < 0:
                self._line += data[at:]
                if len(self._line) > _LINE_LIMIT:
                    raise Refused(error_answer(400))
                return size
            line = bytes(self._line) + data[at : newline + 1]
            self._line.clear()
            at = newline + 1
            if not line.endswith(b"\r\n") or len(line) > _LINE_LIMIT:
                raise Refused(error_answer(400))
            self._chunk_line(line[:-2])
        return at

    def _chunk_line(self, line: bytes) -> None:
        if self._state == "data_end":
            if line:
                raise Refused(error_answer(400))
            self._state = "size"
        elif self._state == "size":
            digits = line.split(b";", 1)[0].rstrip(b" \t")
            if not _CHUNK_SIZE.fullmatch(digits):
                raise Refused(error_answer(400))
            chunk = int(digits, 16)
            self._decoded += chunk
            if self._decoded > self.limits.body_bytes:
                raise Refused(service_error_answer(body_too_large(self.limits.body_bytes)))
            self._chunk_left = chunk
            self._state = "data" if chunk else "trailer"
        elif not line:  # the blank line after the trailers
            self.complete = True

    def _store(self, data: bytes) -> None:
        if self._chunked:
            # Chunk framing costs a few bytes a chunk: raw bytes past twice the largest body are
            # not an upload.
            if self._taken + len(data) > 2 * self.limits.body_bytes + _LINE_LIMIT:
                raise Refused(service_error_answer(body_too_large(self.limits.body_bytes)))
            self._reserve(len(data))
        if self._spill is None and len(self._memory) + len(data) > self.limits.memory_bytes:
            self._spill = tempfile.TemporaryFile(dir=self.limits.spool_dir)  # noqa: SIM115 (closed by `close`)
            self._spill.write(self._memory)
            self._memory = bytearray()
        if self._spill is not None:
            self._spill.write(data)
        else:
            self._memory += data

    # -- reading

    def request(self) -> BufferedRequest:
        """The complete request, for the thread that serves it."""
        if self._spill is not None:
            self._spill.flush()
            self._spill.seek(0)
        return BufferedRequest(bytes(self._head), bytes(self._memory), self._spill)

    def continue_answer(self) -> bytes:
        """`100 Continue`, once: the client waits for it before sending the body."""
        self.continue_due = False
        return _CONTINUE

    def expired(self, now: float) -> bool:
        return self.deadline is not None and now >= self.deadline

    def timeout_answer(self) -> bytes:
        if not self._head_end:
            return service_error_answer(head_timeout(self.limits.head_seconds))
        return service_error_answer(body_timeout(self.limits.body_seconds))

    def close(self) -> None:
        """Give the buffers back (the temporary file has no name: closing it frees its blocks)."""
        self._budget.give(self._taken)
        self._taken = 0
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        self._memory = bytearray()

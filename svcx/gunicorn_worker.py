"""The web server's worker: gunicorn's threaded worker whose event loop reads each request
whole before a thread sees it, and which answers every request it refuses with the JSON error
envelope instead of gunicorn's HTML page.

gunicorn's gthread hands a connection to a thread at its first byte; the thread then blocks
reading the headers and the body, so a few dozen clients trickling a line every few seconds
hold every thread and the service stops answering. Here the loop (non-blocking sockets, one
selector) reads the head and the body (`core.edge.RequestReader`: memory up to 64 KiB, an
unlinked temporary file beyond), enforces the header and body deadlines (408 `request_timeout`)
and the largest upload (413 `file_too_large`), answers `Expect: 100-continue`, and submits only
complete requests to the thread pool; gunicorn parses and serves them there as before, and a
kept-alive or pipelined connection comes back to the loop. A slow or idle client costs a file
descriptor and a buffer, never a thread.

gunicorn builds its own refusals in `Worker.handle_error` through `gunicorn.util.write_error`;
the module function is replaced by `core.edge.write_error` once, when this module is imported
by the server. TLS and HTTP/2 are the proxy's (deploy/nginx.conf), not this worker's.
"""

from __future__ import annotations

import contextlib
import errno
import resource
import selectors
import socket
import ssl
import time
from concurrent.futures import Future
from functools import partial
from typing import Any

from gunicorn import http, util
from gunicorn.workers.gthread import TConn, ThreadWorker

from core.edge import BufferBudget, BufferedRequest, EdgeLimits, Refused, RequestReader, write_error

util.write_error = write_error  # see the module docstring

# How often deadlines are checked: a deadline is enforced within this much of its instant.
SWEEP_SECONDS = 0.25
# How long a refused connection is drained before it is closed: closing a socket with unread
# bytes resets it, and the client could lose the answer written just before.
LINGER_SECONDS = 2.0
# A request line and headers larger than this are refused (431, in the envelope).
HEAD_BYTES = 64 * 1024


class BufferedConn(TConn):
    """A client connection: read by the event loop until a request is complete, then served by a
    thread."""

    def __init__(self, cfg: Any, sock: socket.socket, client: Any, server: Any, reader: RequestReader) -> None:
        super().__init__(cfg, sock, client, server)  # non-blocking from here
        self.initialized = True  # no TLS, no HTTP/2 to negotiate here
        self.data_ready = True
        self.reader = reader
        self.source: BufferedRequest | None = None
        self.idle_until = 0.0  # closed without an answer if no byte of a request came by then
        self.closing_until: float | None = None  # refused: drained until then, then closed
        self.registered = False


class JsonErrorThreadWorker(ThreadWorker):
    """gthread with an event loop that buffers whole requests; see the module docstring."""

    limits: EdgeLimits
    budget: BufferBudget

    def init_process(self) -> None:
        if self.cfg.is_ssl:
            raise RuntimeError("svcx's web worker does not terminate TLS: put the proxy (deploy/nginx.conf) in front")
        _raise_file_limit(self.worker_connections + 256)
        self.waiting: set[BufferedConn] = set()
        super().init_process()

    def _read_limits(self) -> None:
        # The application (and Django's settings) is loaded by now: init_process runs run() last.
        from django.conf import settings

        self.limits = EdgeLimits(
            head_bytes=HEAD_BYTES,
            body_bytes=max(int(settings.SVCX_CONVERT_UPLOAD_LIMIT), int(settings.SVCX_FILES_UPLOAD_LIMIT)),
            head_seconds=float(settings.SVCX_HEADER_DEADLINE_SECONDS),
            body_seconds=float(settings.SVCX_UPLOAD_DEADLINE_SECONDS),
            spool_dir=str(settings.SVCX_SPOOL_DIR),
        )
        self.budget = BufferBudget(int(settings.SVCX_EDGE_BUFFER_BYTES))

    # -- the loop

    def run(self) -> None:
        self._read_limits()
        self.poller.register(self.method_queue.fileno(), selectors.EVENT_READ, self.method_queue.run_callbacks)
        self.set_accept_enabled(True)
        next_sweep = 0.0
        while self.alive:
            self.notify()
            can_accept = self.nr_conns < self.worker_connections
            if can_accept != self._accepting:
                self.set_accept_enabled(can_accept)
            self.wait_for_and_dispatch_events(timeout=SWEEP_SECONDS)
            if not self.is_parent_alive():
                break
            now = time.monotonic()
            if now >= next_sweep:
                self._sweep(now)
                next_sweep = now + SWEEP_SECONDS

        # Stopping: no new connection; a client that has not started a request is closed, one
        # being read or served is finished within the grace period.
        self.set_accept_enabled(False)
        for conn in list(self.waiting):
            if conn.reader.started is None:
                self._drop(conn)
        grace = time.monotonic() + self.cfg.graceful_timeout
        while self.nr_conns > 0 and time.monotonic() < grace:
            self.notify()
            self.wait_for_and_dispatch_events(timeout=SWEEP_SECONDS)
            self._sweep(time.monotonic())
        for conn in list(self.waiting):
            self._drop(conn)
        self.tpool.shutdown(wait=False)
        self.poller.close()
        self.method_queue.close()
        for listener in self.sockets:
            listener.close()

    def accept(self, listener: Any) -> None:
        try:
            sock, client = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = BufferedConn(self.cfg, sock, client, listener.getsockname(), RequestReader(self.limits, self.budget))
        # A new connection's first byte is due as soon as a request's headers would be.
        conn.idle_until = time.monotonic() + self.limits.head_seconds
        self._wait(conn)

    def _wait(self, conn: BufferedConn) -> None:
        if not conn.registered:
            conn.sock.setblocking(False)
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._readable, conn))
            conn.registered = True
        self.waiting.add(conn)

    def _unwait(self, conn: BufferedConn) -> None:
        self.waiting.discard(conn)
        if conn.registered:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.poller.unregister(conn.sock)
            conn.registered = False

    def _readable(self, conn: BufferedConn, _sock: Any) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if not data or conn.closing_until is not None:
            if not data:
                self._drop(conn)
            return  # a refused connection's bytes are discarded
        self._feed(conn, data)

    def _feed(self, conn: BufferedConn, data: bytes) -> None:
        try:
            conn.reader.feed(data, time.monotonic())
        except Refused as refused:
            self._refuse(conn, refused.answer)
            return
        if conn.reader.continue_due:
            with contextlib.suppress(OSError):
                conn.sock.send(conn.reader.continue_answer())
        if conn.reader.complete:
            self._unwait(conn)
            conn.source = conn.reader.request()
            conn.parser = http.RequestParser(self.cfg, conn.source, conn.client)
            self.enqueue_req(conn)
        else:
            self._wait(conn)

    def _sweep(self, now: float) -> None:
        for conn in list(self.waiting):
            if conn.closing_until is not None:
                if now >= conn.closing_until:
                    self._drop(conn)
            elif conn.reader.started is None:
                if now >= conn.idle_until:
                    self._drop(conn)  # idle: closed without an answer, as a kept-alive connection is
            elif conn.reader.expired(now):
                self._refuse(conn, conn.reader.timeout_answer())

    def _refuse(self, conn: BufferedConn, answer: bytes) -> None:
        with contextlib.suppress(OSError):
            conn.sock.send(answer)  # a few hundred bytes: the send buffer of a new answer holds them
        self._linger(conn)

    def _linger(self, conn: BufferedConn) -> None:
        conn.reader.close()
        with contextlib.suppress(OSError):
            conn.sock.shutdown(socket.SHUT_WR)
        conn.closing_until = time.monotonic() + LINGER_SECONDS
        self._wait(conn)

    def _drop(self, conn: BufferedConn) -> None:
        self._unwait(conn)
        conn.reader.close()
        self.nr_conns -= 1
        conn.close()

    # -- the thread pool

    def finish_request(self, conn: BufferedConn, fs: Future[Any]) -> None:
        """On the loop's thread, when a thread has served the connection's request."""
        try:
            keepalive = bool(fs.result()) if not fs.cancelled() else False
        except Exception:
            keepalive = False
        leftover = conn.reader.leftover
        conn.reader.close()
        conn.source = None
        conn.parser = None
        conn.reader = RequestReader(self.limits, self.budget)
        if not (keepalive and self.alive):
            self._linger(conn)
            return
        conn.sock.setblocking(False)
        conn.idle_until = time.monotonic() + self.cfg.keepalive
        if leftover:
            self._feed(conn, leftover)
        else:
            self._wait(conn)

    def handle(self, conn: BufferedConn) -> bool:
        """Serve the connection's complete request, in a thread. True to keep the connection."""
        req = None
        try:
            conn.sock.setblocking(True)
            req = next(conn.parser)
            if not req:
                return False
            req._expected_100_continue = False  # already answered by the loop
            if not self.handle_request(req, conn):
                return False
            # Kept alive only when gunicorn framed the request where the loop did.
            source = conn.source
            return bool(conn.parser.finish_body()) and source is not None and source.consumed()
        except http.errors.NoMoreData as exc:
            self.log.debug("Ignored premature client disconnection. %s", exc)
        except StopIteration as exc:
            self.log.debug("Closing connection. %s", exc)
        except ssl.SSLError:
            self.log.debug("Unexpected TLS error on a plain connection.")
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                self.log.exception("Socket error processing request.")
        except Exception as exc:
            self.handle_error(req, conn.sock, conn.client, exc)
        return False


def _raise_file_limit(wanted: int) -> None:
    """Each connection is a file descriptor: raise the soft limit toward `wanted` (within the
    hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))

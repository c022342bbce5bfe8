"""A webhook receiver for the tests: a threaded HTTP server on 127.0.0.1, started by the test,
that answers each POST as scripted (a status, or hanging) and keeps every request it got."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# An answer: a status to reply with, or HANG (keep the connection open, answer nothing).
HANG = -1


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float


@dataclass
class Receiver:
    """`answers` are used in turn; once they run out, `then` answers every request."""

    answers: list[int] = field(default_factory=list)
    then: int = 200
    reply: bytes | None = None  # the body of every answer, instead of a short default
    seen: list[Received] = field(default_factory=list)
    url: str = ""
    released: threading.Event = field(default_factory=threading.Event)

    def wait_for(self, count: int, timeout: float = 60) -> list[Received]:
        """The first `count` requests, once they came (fails the test after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while len(self.seen) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"the receiver got {len(self.seen)} requests, not {count}, in {timeout} s")
            time.sleep(0.05)
        return self.seen[:count]

    def _next_answer(self) -> int:
        return self.answers.pop(0) if self.answers else self.then


def started(receiver: Receiver, path: str = "/hooks", port: int = 0) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Serve `receiver` on 127.0.0.1 (on `port`: the same again after a stop, else a free one)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # the name http.server calls
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                receiver.seen.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.time())
                )
                status = receiver._next_answer()
            if status == HANG:
                receiver.released.wait(120)
                return
            reply = receiver.reply if receiver.reply is not None else (b'{"ok": true}' if status < 300 else b"no")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_port}{path}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread


def running(receiver: Receiver) -> Iterator[Receiver]:
    """For a fixture: the receiver served until the test ends."""
    server, _ = started(receiver)
    try:
        yield receiver
    finally:
        receiver.released.set()
        server.shutdown()
        server.server_close()

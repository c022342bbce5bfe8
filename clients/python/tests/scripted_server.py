"""A real HTTP server on 127.0.0.1 that answers what a test scripts, and records what it got.

The SDK's own tests need no service: they check what the SDK sends and how it reads and retries
answers. Its tests against the live service are the repository's tests/clients/.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Canned:
    """One answer; `drop` closes the connection without answering."""

    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    drop: bool = False
    delay: float = 0.0


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw_headers: dict[str, bytes]
    body: bytes


def envelope(status: int, code: str, type_: str, *, retryable: bool = False, **extra: Any) -> Canned:
    error = {
        "type": type_,
        "code": code,
        "message": f"The {code} message.",
        "param": extra.pop("param", None),
        "retryable": retryable,
        "retry_after_ms": extra.pop("retry_after_ms", None),
        "doc_url": f"https://svcx.test/docs/errors/{code}",
        "request_id": "req_test",
        "details": extra.pop("details", {}),
    }
    headers = {"Content-Type": "application/json", "X-Request-Id": "req_test", **extra.pop("headers", {})}
    return Canned(status, json.dumps({"error": error}).encode(), headers)


def rate_limited(code: str, **extra: Any) -> Canned:
    return envelope(429, code, "rate_limit_error", retryable=True, **extra)


def markdown(text: str, *, pages: int = 1, cached: bool = False, delay: float = 0.0, replayed: bool = False) -> Canned:
    """A conversion answered in Markdown, billing in the X-Svcx-* headers."""
    billed = "0" if cached else str(pages)
    headers = {
        "Content-Type": "text/markdown; charset=utf-8",
        "X-Request-Id": "req_md",
        "X-Svcx-Pages-Billed": billed,
        "X-Svcx-Credits-Billed": billed,
        "X-Svcx-Result-Truncated": "false",
        "X-Svcx-Cached": "true" if cached else "false",
    }
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return Canned(body=text.encode(), headers=headers, delay=delay)


def conversion(pages: int = 1, *, cached: bool = False) -> Canned:
    body = {
        "object": "conversion",
        "request_id": "req_conv",
        "engine": {"id": "svcx-layout", "version": "1"},
        "document": {"page_count": pages, "sha256": "ab" * 32},
        "pages": [
            {
                "page": n,
                "label": None,
                "markdown": f"Page {n}",
                "has_text_layer": True,
                "warnings": [],
                "width": 612.0,
                "height": 792.0,
                "elements": [],
            }
            for n in range(1, pages + 1)
        ],
        "markdown": "\n\n".join(f"Page {n}" for n in range(1, pages + 1)),
        "result_truncated": False,
        "pages_billed": 0 if cached else pages,
        "credits_billed": 0 if cached else pages,
        "cached": cached,
        "warnings": [],
        "future_member": "ignored",
    }
    return Canned(200, json.dumps(body).encode(), {"Content-Type": "application/json", "X-Request-Id": "req_conv"})


class Scripted:
    """The server: `answers` are given in order (then `{}` with 200); `seen` records requests."""

    def __init__(self) -> None:
        self.answers: list[Canned] = []
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                raw = {k.lower(): v.encode("latin-1") for k, v in self.headers.items()}
                with scripted.lock:
                    scripted.seen.append(
                        Seen(
                            self.command,
                            parts.path,
                            parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()},
                            raw,
                            body,
                        )
                    )
                    answer = scripted.answers.pop(0) if scripted.answers else Canned()
                    scripted.in_flight += 1
                    scripted.most_in_flight = max(scripted.most_in_flight, scripted.in_flight)
                time.sleep(answer.delay)
                with scripted.lock:
                    scripted.in_flight -= 1
                if answer.drop:
                    self.close_connection = True
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST = do_DELETE = handle_one

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Sleeps:
    """A stand-in for time.sleep that records the waits and waits for none of them."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)

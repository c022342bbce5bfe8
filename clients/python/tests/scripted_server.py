"""A real HTTP server on 127.0.0.1 that answers what a test scripts, and records what it got.

The SDK's own tests need no service: they check what the SDK sends and how it reads and retries
answers. Its tests against the live service are the repository's tests/clients/.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Canned:
    """One answer; `drop` closes the connection without answering, `cut` after that many bytes
    of the body (its Content-Length promised all of it)."""

    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    drop: bool = False
    delay: float = 0.0
    cut: int | None = None


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


def page_body(n: int) -> dict[str, Any]:
    return {
        "page": n,
        "label": None,
        "markdown": f"Page {n}",
        "has_text_layer": True,
        "warnings": [],
        "width": 612.0,
        "height": 792.0,
        "elements": [],
    }


def conversion(pages: int = 1, *, cached: bool = False) -> Canned:
    body = {
        "object": "conversion",
        "request_id": "req_conv",
        "engine": {"id": "svcx-layout", "version": "1"},
        "document": {"page_count": pages, "sha256": "ab" * 32},
        "pages": [page_body(n) for n in range(1, pages + 1)],
        "markdown": "\n\n".join(f"Page {n}" for n in range(1, pages + 1)),
        "result_truncated": False,
        "pages_billed": 0 if cached else pages,
        "credits_billed": 0 if cached else pages,
        "cached": cached,
        "warnings": [],
        "future_member": "ignored",
    }
    return Canned(200, json.dumps(body).encode(), {"Content-Type": "application/json", "X-Request-Id": "req_conv"})


def job_body(
    job_id: str = "job_1", status: str = "queued", *, total: int = 3, completed: int = 0, **more: Any
) -> dict[str, Any]:
    """A job as GET /v2/jobs/{id} answers it."""
    ended = status in ("succeeded", "failed", "canceled")
    body = {
        "id": job_id,
        "object": "job",
        "status": status,
        "filename": "book.pdf",
        "options": {"pages": None, "tables": "markdown", "fallback": "empty", "flavor": "gfm"},
        "pages_total": total,
        "pages_completed": completed,
        "credits_held": 0 if ended else total,
        "credits_billed": total if status == "succeeded" else 0,
        "pages_billed": total if status == "succeeded" else 0,
        "error": None,
        "warnings": [],
        "webhook_metadata": None,
        "request_id": "req_create",
        "created_at": "2026-11-27T05:40:12.123456Z",
        "started_at": None if status == "queued" else "2026-11-27T05:40:13Z",
        "finished_at": "2026-11-27T05:40:20Z" if ended else None,
        "expires_at": "2026-11-28T05:40:20Z",
    }
    return {**body, **more}


def job(job_id: str = "job_1", status: str = "queued", *, http_status: int = 200, **more: Any) -> Canned:
    return Canned(http_status, json.dumps(job_body(job_id, status, **more)).encode())


def ndjson(pages: list[int], status: str = "running", *, cut: int | None = None) -> Canned:
    """A stream of a job's pages, one JSON object a line."""
    body = b"".join(json.dumps(page_body(n)).encode() + b"\n" for n in pages)
    headers = {"Content-Type": "application/x-ndjson; charset=utf-8", "X-Svcx-Job-Status": status}
    return Canned(body=body, headers=headers, cut=cut)


class Scripted:
    """The server: `route` answers a request when it returns a Canned; else `answers` are given
    in order (then `{}` with 200). `seen` records requests."""

    def __init__(self) -> None:
        self.route: Callable[[Seen], Canned | None] | None = None
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
                seen = Seen(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    raw,
                    body,
                )
                with scripted.lock:
                    scripted.seen.append(seen)
                    answer = scripted.route(seen) if scripted.route else None
                    if answer is None:
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
                if answer.cut is not None:
                    self.wfile.write(answer.body[: answer.cut])
                    self.close_connection = True
                    return
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

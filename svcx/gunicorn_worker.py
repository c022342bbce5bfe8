"""The web server's worker: gunicorn's threaded worker, answering requests gunicorn itself
refuses (a malformed request line, oversized headers, a bad chunk) with the JSON error
envelope instead of gunicorn's HTML page.

gunicorn builds those answers in `Worker.handle_error` through `gunicorn.util.write_error`;
the module function is replaced once, when this worker class is imported by the server.
"""

from __future__ import annotations

import json
import socket

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker

from core.errors import ErrorCode
from core.ids import new_request_id

_CODES = {500: ErrorCode.INTERNAL_ERROR}


def _doc_url(code: str) -> str:
    try:
        from core.errors import doc_url

        return doc_url(code)
    except Exception:  # settings not loaded: still answer
        return f"/docs/errors/{code}"


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    code = _CODES.get(status_int, ErrorCode.BAD_REQUEST)
    request_id = new_request_id()
    body = json.dumps(
        {
            "error": {
                "type": "api_error" if status_int >= 500 else "invalid_request_error",
                "code": code,
                "message": "The HTTP request could not be parsed."
                if status_int < 500
                else "An internal error occurred.",
                "param": None,
                "retryable": status_int >= 500,
                "retry_after_ms": None,
                "doc_url": _doc_url(code),
                "request_id": request_id,
                "details": {"http_status": status_int},
            }
        },
        separators=(",", ":"),
    ).encode()
    # Statuses the envelope has no type for are answered as a plain 400.
    status = status_int if status_int in (400, 500) else 400
    head = (
        f"HTTP/1.1 {status} {'Bad Request' if status == 400 else 'Internal Server Error'}\r\n"
        f"Connection: close\r\nContent-Type: application/json\r\nX-Request-Id: {request_id}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin1")
    util.write_nonblock(sock, head + body)


util.write_error = write_json_error  # see the module docstring


class JsonErrorThreadWorker(ThreadWorker):
    """gunicorn's gthread worker with JSON error answers (the import above installs them)."""

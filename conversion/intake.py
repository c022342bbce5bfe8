"""Request intake shared by convert, inspect, toc and file uploads.

1. `check_content_type` refuses an encoding the endpoint does not take, before any byte of the
   body is read.
2. `spool_body` copies the raw request body to a temporary file while enforcing the size
   limit (413 `file_too_large`, as soon as Content-Length or the bytes read say so) and the
   total-body deadline (408 `request_timeout`), and hashes it (the idempotency fingerprint).
   Nothing is ever held whole in memory. The DRF parsers of `conversion.parsers` read it there.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from gunicorn.http.errors import ParseException as HttpParseError

from core.context import context_of
from core.edge import body_deadline, body_timeout
from core.errors import ErrorCode, ServiceError, caller_text

CHUNK = 64 * 1024
MULTIPART = "multipart/form-data"
JSON = "application/json"
PDF = "application/pdf"
ENCODINGS = (MULTIPART, JSON, PDF)
# The /raw operations also take the raw PDF as application/octet-stream, the type generated
# clients send for a binary body.
OCTET_STREAM = "application/octet-stream"
# The JSON encoding never carries the PDF itself (base64 is refused), so its body is small.
JSON_BODY_LIMIT = 256 * 1024


# The errors every endpoint that takes a document in the request can answer (for the
# OpenAPI description): the request shape, the body limits, idempotency, a stored source,
# the fleet, and the meters every upload passes.
INTAKE_ERRORS: tuple[ErrorCode, ...] = (
    ErrorCode.MALFORMED_JSON,
    ErrorCode.MULTIPART_MALFORMED,
    ErrorCode.MISSING_SOURCE,
    ErrorCode.MULTIPLE_SOURCES,
    ErrorCode.UNSUPPORTED_SOURCE_TYPE,
    ErrorCode.UNKNOWN_PARAMETER,
    ErrorCode.INVALID_PARAMETER_TYPE,
    ErrorCode.QUERY_OPTIONS_NOT_ALLOWED,
    ErrorCode.UNSUPPORTED_CONTENT_TYPE,
    ErrorCode.FILE_TOO_LARGE,
    ErrorCode.REQUEST_TIMEOUT,
    ErrorCode.IDEMPOTENCY_CONFLICT,
    ErrorCode.IDEMPOTENCY_IN_PROGRESS,
    ErrorCode.RESULT_EXPIRED,
    ErrorCode.FILE_NOT_FOUND,
    ErrorCode.FILE_EXPIRED,
    ErrorCode.OVERLOADED,
    ErrorCode.RATE_LIMIT_CONCURRENCY,
    ErrorCode.RATE_LIMIT_UPLOADS,
)


def media_type(request: HttpRequest) -> str:
    return (request.META.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()


@dataclass
class SpooledBody:
    """The raw body on disk (deleted by `close`), its size and SHA-256."""

    path: Path
    size: int
    sha256: str

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def _deadline_of(request: HttpRequest) -> float:
    started = context_of(request).started_monotonic or time.monotonic()
    return float(started) + float(settings.SVCX_UPLOAD_DEADLINE_SECONDS)


def _timeout() -> ServiceError:
    return body_timeout(float(settings.SVCX_UPLOAD_DEADLINE_SECONDS))


def size_text(size: int) -> str:
    """`33554432` -> `32 MiB`, `262144` -> `256 KiB`."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.4g} {unit}"
    return f"{size} bytes"


def too_large(limit: int, what: str = "upload") -> ServiceError:
    hint = (
        " Upload large files once with POST /v1/files (up to 128 MiB) and convert them by file_id."
        if what == "upload"
        else ""
    )
    return ServiceError(
        ErrorCode.FILE_TOO_LARGE,
        f"The {what} is larger than {size_text(limit)}.{hint}",
        details={"limit_bytes": limit},
    )


def _body_stream(request: HttpRequest) -> Any:
    """The stream the body is read from. A chunked request has no Content-Length, so Django's
    own stream would read nothing; the server's input stream decodes the chunks."""
    if "CONTENT_LENGTH" not in request.META and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        return request.META["wsgi.input"]
    return request


def declared_length(request: HttpRequest, *, limit: int, what: str = "upload") -> int:
    """The body length the Content-Length header declares (0 when it declares none). Raises
    `file_too_large` when it is over `limit`: a body that can never be accepted is refused as
    such, before any meter could call it a matter of waiting."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    length = int(declared) if declared.isdigit() else 0
    if length > limit:
        raise too_large(limit, what)
    return length


def spool_body(request: HttpRequest, *, limit: int, what: str = "upload") -> SpooledBody:
    """Copy the body to a temporary file. Raises `file_too_large` or `request_timeout`;
    nothing is left on disk when it raises."""
    declared_length(request, limit=limit, what=what)
    deadline = _deadline_of(request)
    stream = _body_stream(request)
    digest = hashlib.sha256()
    size = 0
    directory = Path(settings.SVCX_SPOOL_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix="body-", dir=directory)
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as out, body_deadline(request, deadline) as watch:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _timeout()
                # A stalled client must not hold a thread past the deadline.
                watch.limit_wait(remaining)
                try:
                    chunk = stream.read(CHUNK)
                except (HttpParseError, OSError) as exc:
                    # A stream cut at the deadline ends mid-chunk or mid-body: that is the timeout.
                    if time.monotonic() >= deadline or watch.cut:
                        raise _timeout() from exc
                    if isinstance(exc, HttpParseError):
                        # The server's reader refused the framing (a bad chunk size, say).
                        raise ServiceError(
                            ErrorCode.BAD_REQUEST,
                            "The request body's transfer encoding is malformed (bad chunk framing).",
                        ) from exc
                    # Django wraps the wait's timeout in UnreadablePostError (an OSError).
                    if isinstance(exc, TimeoutError) or isinstance(exc.__cause__, TimeoutError):
                        raise _timeout() from exc
                    raise ServiceError(
                        ErrorCode.BAD_REQUEST, "The request body could not be read; the connection broke."
                    ) from exc
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise too_large(limit, what)
                digest.update(chunk)
                out.write(chunk)
        if watch.cut or time.monotonic() > deadline:
            raise _timeout()
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return SpooledBody(path=path, size=size, sha256=digest.hexdigest())


_ENCODING_TEXT = {
    MULTIPART: "multipart/form-data (a `file` part)",
    JSON: "application/json (with `file_id`)",
    PDF: "application/pdf (the raw PDF)",
    OCTET_STREAM: "application/octet-stream (the raw PDF)",
}


def unsupported_content_type(
    kind: str, encodings: tuple[str, ...] = ENCODINGS, raw_path: str | None = None
) -> ServiceError:
    """415 naming what the endpoint takes; for a binary body sent to an endpoint whose raw
    operation takes it (`raw_path`), naming that operation too."""
    shown = caller_text(kind) or "none"
    described = [_ENCODING_TEXT[e] for e in encodings]
    listed = ", ".join(described[:-1]) + f" or {described[-1]}" if len(described) > 1 else described[0]
    details: dict[str, object] = {"accepted": list(encodings)}
    message = f"Content-Type {shown!r} is not accepted here. Send {listed}."
    if raw_path is not None and kind == OCTET_STREAM:
        message += f" Or send the same body to POST {raw_path}, which takes the PDF as {OCTET_STREAM}."
        details["raw_operation"] = raw_path
    return ServiceError(ErrorCode.UNSUPPORTED_CONTENT_TYPE, message, details=details)


def check_content_type(
    request: HttpRequest, encodings: tuple[str, ...] = ENCODINGS, raw_path: str | None = None
) -> str:
    """The body encoding, checked before any byte of the body is read. `raw_path`: the raw
    operation beside this endpoint, if there is one (`/v1/convert/raw`)."""
    kind = media_type(request)
    if kind not in encodings:
        if (
            not kind
            and not request.META.get("CONTENT_LENGTH", "0").strip("0")
            and "HTTP_TRANSFER_ENCODING" not in request.META
        ):
            raise ServiceError(ErrorCode.MISSING_SOURCE, "The request has no body: send a PDF.")
        raise unsupported_content_type(kind, encodings, raw_path)
    if kind == MULTIPART and "boundary=" not in (request.META.get("CONTENT_TYPE") or ""):
        raise ServiceError(ErrorCode.MULTIPART_MALFORMED, "The multipart/form-data Content-Type has no boundary.")
    return kind

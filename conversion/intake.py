"""Request intake shared by convert, inspect, toc and file uploads.

1. `spool_body` copies the raw request body to a temporary file while enforcing the size
   limit (413 `file_too_large`, as soon as Content-Length or the bytes read say so) and the
   total-body deadline (408 `request_timeout`), and hashes it (the idempotency fingerprint).
   Nothing is ever held whole in memory.
2. `parse_body` reads the spooled body in one of the three encodings of decisions.md 1 and
   returns the source (an uploaded PDF on disk, or a stored file id) and the raw options.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParser, MultiPartParserError
from gunicorn.http.errors import ParseException as HttpParseError

from core.context import context_of
from core.edge import body_deadline
from core.errors import ErrorCode, ServiceError, caller_text

CHUNK = 64 * 1024
MULTIPART = "multipart/form-data"
JSON = "application/json"
PDF = "application/pdf"
ENCODINGS = (MULTIPART, JSON, PDF)
# The /raw operations also take the raw PDF as application/octet-stream, the type generated
# clients send for a binary body.
OCTET_STREAM = "application/octet-stream"
RAW_ENCODINGS = (PDF, OCTET_STREAM)
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
    seconds = int(settings.SVCX_UPLOAD_DEADLINE_SECONDS)
    return ServiceError(
        ErrorCode.REQUEST_TIMEOUT,
        f"The request body did not arrive within {seconds} seconds. On a slow link, upload once with "
        "POST /v1/files and convert by file_id.",
        details={"deadline_seconds": seconds},
    )


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


def spool_body(request: HttpRequest, *, limit: int, what: str = "upload") -> SpooledBody:
    """Copy the body to a temporary file. Raises `file_too_large` or `request_timeout`;
    nothing is left on disk when it raises."""
    declared = request.META.get("CONTENT_LENGTH")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large(limit, what)
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


@dataclass
class Upload:
    """A PDF received in the request, on disk."""

    path: Path
    size: int
    sha256: str
    filename: str = ""


@dataclass
class ParsedBody:
    """What the request asked for, before validation of the options."""

    encoding: str
    upload: Upload | None = None
    file_id: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    # Where each option came from, for `param` in errors: "options" (body) or "" (query string).
    options_prefix: str = "options."
    password: str | None = None
    metadata: dict[str, Any] | None = None
    debug: bool = False
    temporary: list[Path] = field(default_factory=list)

    def close(self) -> None:
        for path in self.temporary:
            path.unlink(missing_ok=True)


_SOURCE_MEMBERS = ("file_id", "url", "base64")
QUERY_OPTIONS = ("pages", "ocr", "flavor", "tables", "fallback", "debug")


def _refuse_query(request: HttpRequest) -> None:
    if request.GET:
        name = caller_text(next(iter(request.GET)))
        raise ServiceError(
            ErrorCode.QUERY_OPTIONS_NOT_ALLOWED,
            f"Query parameter {name!r} is not allowed with a multipart or JSON body; put options in the body's "
            "`options` object.",
            param=name,
        )


def _sources(present: list[str]) -> None:
    """Exactly one source: several is multiple_sources; url or base64 alone is refused."""
    if len(present) > 1:
        raise ServiceError(
            ErrorCode.MULTIPLE_SOURCES,
            f"The request has {len(present)} sources ({', '.join(present)}); send exactly one.",
            param=present[1],
        )
    if present and present[0] in ("url", "base64"):
        name = present[0]
        why = "base64 sources are refused permanently" if name == "base64" else "url sources are not available in v1"
        raise ServiceError(
            ErrorCode.UNSUPPORTED_SOURCE_TYPE,
            f"{why}. Upload the PDF bytes (multipart `file` part or an application/pdf body), or upload once with "
            "POST /v1/files and send `file_id`.",
            param=name,
        )


def _json_value(raw: str, param: str) -> Any:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ServiceError(ErrorCode.MALFORMED_JSON, f"The `{param}` part is not valid JSON.", param=param) from exc
    _check_unicode(value, param)
    return value


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string of a parsed JSON value, keys included, with the path it sits at."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield item, where
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{where}.{key}" if where else str(key)
                yield key, child_path
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))


def _check_unicode(value: Any, path: str) -> None:
    """JSON may escape a lone UTF-16 surrogate (`\\ud800`), which is no character: such a string
    cannot be stored or written back, so the body is refused as malformed."""
    for text, where in _strings(value, path):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            param = caller_text(where) or None
            raise ServiceError(
                ErrorCode.MALFORMED_JSON,
                f"The string at `{param or 'the body'}` contains an unpaired surrogate escape; send valid Unicode.",
                param=param,
            ) from exc


def _object(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, f"`{param}` must be a JSON object.", param=param)
    return value


def _string(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, f"`{param}` must be a string.", param=param)
    return value


def _boolean(value: Any, param: str, *, text: bool) -> bool:
    """A JSON boolean; in a text encoding (a multipart part, a query parameter) `true` or `false`."""
    if isinstance(value, bool):
        return value
    if text and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    expected = "true or false" if text else "a JSON boolean (true or false, not a string)"
    raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, f"`{param}` must be {expected}.", param=param)


def _metadata(value: Any, param: str) -> dict[str, Any]:
    metadata = _object(value, param)
    for text, where in _strings(metadata, param):
        if "\x00" in text:
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`{caller_text(where)}` contains a NUL character, which metadata cannot hold.",
                param=caller_text(where),
            )
    size = len(json.dumps(metadata, separators=(",", ":")).encode())
    limit = int(settings.SVCX_METADATA_LIMIT_BYTES)
    if size > limit:
        raise ServiceError(
            ErrorCode.METADATA_TOO_LARGE,
            f"`metadata` is {size} bytes of JSON; the limit is {limit}. Send a smaller object, such as an id.",
            param=param,
            details={"limit_bytes": limit, "size_bytes": size},
        )
    return metadata


def _parse_json(body: SpooledBody, allowed: tuple[str, ...]) -> ParsedBody:
    if body.size > JSON_BODY_LIMIT:
        raise too_large(JSON_BODY_LIMIT, "JSON body")
    try:
        data = json.loads(body.path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise ServiceError(ErrorCode.MALFORMED_JSON, "The request body is not valid JSON.") from exc
    _check_unicode(data, "")
    if not isinstance(data, dict):
        raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, "The JSON body must be an object.")
    _sources([name for name in _SOURCE_MEMBERS if name in data])
    for name in data:
        if name not in allowed and name not in _SOURCE_MEMBERS:
            raise ServiceError(
                ErrorCode.UNKNOWN_PARAMETER, f"Unknown member {caller_text(name)!r}.", param=caller_text(name)
            )
    if "file_id" not in data:
        raise ServiceError(ErrorCode.MISSING_SOURCE, "No PDF: send `file_id` of a stored file, or upload the bytes.")
    parsed = ParsedBody(encoding=JSON, file_id=_string(data["file_id"], "file_id"))
    _fill(parsed, data, lambda value, name: value)
    return parsed


def _fill(parsed: ParsedBody, data: Any, decode: Any) -> None:
    """Options, password, metadata and debug from a JSON object or multipart text parts."""
    if "options" in data:
        parsed.options = _object(decode(data["options"], "options"), "options")
    if "password" in data:
        parsed.password = _string(data["password"], "password")
    if "metadata" in data:
        parsed.metadata = _metadata(decode(data["metadata"], "metadata"), "metadata")
    if "debug" in data:
        parsed.debug = _boolean(data["debug"], "debug", text=parsed.encoding != JSON)


def _boundary(request: HttpRequest) -> str:
    return (request.META.get("CONTENT_TYPE") or "").split("boundary=", 1)[-1].split(";")[0].strip().strip('"')


def _part_count(request: HttpRequest, body: SpooledBody) -> int:
    """How many parts the body holds: its delimiter lines, less the closing one. The boundary is
    chosen by the client so that it appears nowhere inside a part."""
    delimiter = f"--{_boundary(request)}".encode()
    line = b"\r\n" + delimiter  # a delimiter starts a line: only those are searched for
    with body.path.open("rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
        count = 1 if data[: len(delimiter)] == delimiter else 0
        at = data.find(line)
        while at != -1:
            count += 1
            at = data.find(line, at + len(line))
    return max(0, count - 1)


def _closing_delimiter_present(request: HttpRequest, body: SpooledBody) -> bool:
    """Whether the body ends with its closing boundary: a truncated upload does not, and
    Django's parser would otherwise read it as a shorter, valid form."""
    closing = f"--{_boundary(request)}--".encode()
    with body.path.open("rb") as stream:
        stream.seek(max(0, body.size - len(closing) - 64))
        return closing in stream.read()


def _parse_multipart(request: HttpRequest, body: SpooledBody, allowed: tuple[str, ...]) -> ParsedBody:
    if not _closing_delimiter_present(request, body):
        raise ServiceError(
            ErrorCode.MULTIPART_MALFORMED,
            "The multipart/form-data body does not end with its closing boundary (cut short?).",
        )
    meta = {**request.META, "CONTENT_LENGTH": str(body.size)}
    # Parts go straight to disk, never into memory.
    handlers = [TemporaryFileUploadHandler(request)]
    try:
        with body.path.open("rb") as stream:
            fields, files = MultiPartParser(meta, stream, handlers, request.encoding).parse()
    except (MultiPartParserError, TooManyFieldsSent, TooManyFilesSent, UnicodeDecodeError, ValueError) as exc:
        raise ServiceError(ErrorCode.MULTIPART_MALFORMED, "The multipart/form-data body does not parse.") from exc
    except RequestDataTooBig as exc:
        raise ServiceError(ErrorCode.MULTIPART_MALFORMED, "A text part of the multipart body is too large.") from exc
    received = sum(len(values) for _, values in fields.lists()) + sum(len(values) for _, values in files.lists())
    if received < _part_count(request, body):
        # Django's parser skips a part without a usable name; nothing the client sent is ignored.
        raise ServiceError(
            ErrorCode.MULTIPART_MALFORMED,
            "A part of the multipart body could not be read: each part needs "
            '`Content-Disposition: form-data; name="..."` (a UTF-8 name), and a file part a filename.',
        )
    parsed = ParsedBody(encoding=MULTIPART)
    uploaded = files.getlist("file")
    for name in list(fields) + list(files):
        if name not in allowed and name not in _SOURCE_MEMBERS and name != "file":
            raise ServiceError(
                ErrorCode.UNKNOWN_PARAMETER, f"Unknown part {caller_text(name)!r}.", param=caller_text(name)
            )
    for name in list(fields) + list(files):
        if len(fields.getlist(name)) + len(files.getlist(name)) > 1:
            param = caller_text(name)
            if name == "file":
                raise ServiceError(
                    ErrorCode.MULTIPLE_SOURCES,
                    "The request has more than one `file` part; send exactly one.",
                    param="file",
                )
            raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, f"Part {param!r} appears more than once.", param=param)
    present = (["file"] if uploaded or "file" in fields else []) + [n for n in _SOURCE_MEMBERS if n in fields]
    _sources(present)
    if not present:
        raise ServiceError(ErrorCode.MISSING_SOURCE, "No PDF: add a part named `file` with the PDF bytes.")
    if uploaded:
        part = uploaded[0]
        temp_path = Path(part.temporary_file_path())
        # Keep the spooled part: the upload handler would delete it when the object is collected.
        kept = temp_path.with_name(temp_path.name + ".pdf")
        os.link(temp_path, kept)
        parsed.temporary.append(kept)
        parsed.upload = Upload(
            path=kept, size=part.size, sha256=_sha256_file(kept), filename=caller_text(part.name or "")
        )
        part.close()
    elif "file" in fields:
        raise ServiceError(
            ErrorCode.INVALID_PARAMETER_TYPE,
            "The `file` part must be a file (with a filename), not a text field.",
            param="file",
        )
    else:
        parsed.file_id = str(fields["file_id"])
    _fill(parsed, fields, _json_value)
    return parsed


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _header_text(value: str) -> str:
    """A header value as the client wrote it: WSGI hands headers over as Latin-1, but clients send
    non-ASCII text (a password, a metadata value) as UTF-8. Bytes that are not UTF-8 stay Latin-1."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _parse_pdf(request: HttpRequest, body: SpooledBody, allowed_query: tuple[str, ...]) -> ParsedBody:
    for name in request.GET:
        if name not in allowed_query:
            raise ServiceError(
                ErrorCode.UNKNOWN_PARAMETER,
                f"Unknown query parameter {caller_text(name)!r}; accepted: {', '.join(allowed_query) or 'none'}.",
                param=caller_text(name),
            )
        if len(request.GET.getlist(name)) > 1:
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"Query parameter {caller_text(name)!r} appears more than once.",
                param=caller_text(name),
            )
    if body.size == 0:
        raise ServiceError(
            ErrorCode.MISSING_SOURCE, "The application/pdf body is empty: send the PDF bytes as the body."
        )
    parsed = ParsedBody(
        encoding=PDF, upload=Upload(path=body.path, size=body.size, sha256=body.sha256), options_prefix=""
    )
    parsed.options = {name: request.GET[name] for name in request.GET if name != "debug"}
    if "debug" in request.GET:
        parsed.debug = _boolean(request.GET["debug"], "debug", text=True)
    password = request.META.get("HTTP_X_SVCX_PDF_PASSWORD")
    if password is not None:
        parsed.password = _header_text(password)
    metadata = request.META.get("HTTP_X_SVCX_METADATA")
    if metadata is not None:
        metadata = _header_text(metadata)
        parsed.metadata = _metadata(_json_value(metadata, "X-Svcx-Metadata"), "X-Svcx-Metadata")
    return parsed


def parse_body(
    request: HttpRequest,
    body: SpooledBody,
    *,
    allowed: tuple[str, ...] = ("options", "password", "metadata", "debug"),
    allowed_query: tuple[str, ...] = QUERY_OPTIONS,
) -> ParsedBody:
    """The request's source and raw options. Raises the request-shape errors of decisions.md 1.

    For an application/pdf body the spooled body itself is the upload (no copy is made).
    """
    kind = media_type(request)
    if kind == PDF:
        return _parse_pdf(request, body, allowed_query)
    if kind == JSON:
        _refuse_query(request)
        return _parse_json(body, allowed)
    if kind == MULTIPART:
        _refuse_query(request)
        return _parse_multipart(request, body, allowed)
    raise unsupported_content_type(kind)


_ENCODING_TEXT = {
    MULTIPART: "multipart/form-data (a `file` part)",
    JSON: "application/json (with `file_id`)",
    PDF: "application/pdf (the raw PDF)",
    OCTET_STREAM: "application/octet-stream (the raw PDF)",
}


def unsupported_content_type(kind: str, encodings: tuple[str, ...] = ENCODINGS) -> ServiceError:
    shown = caller_text(kind) or "none"
    described = [_ENCODING_TEXT[e] for e in encodings]
    listed = ", ".join(described[:-1]) + f" or {described[-1]}" if len(described) > 1 else described[0]
    return ServiceError(
        ErrorCode.UNSUPPORTED_CONTENT_TYPE,
        f"Content-Type {shown!r} is not accepted here. Send {listed}.",
        details={"accepted": list(encodings)},
    )


def check_content_type(request: HttpRequest, encodings: tuple[str, ...] = ENCODINGS) -> str:
    """The body encoding, checked before any byte of the body is read."""
    kind = media_type(request)
    if kind not in encodings:
        if (
            not kind
            and not request.META.get("CONTENT_LENGTH", "0").strip("0")
            and "HTTP_TRANSFER_ENCODING" not in request.META
        ):
            raise ServiceError(ErrorCode.MISSING_SOURCE, "The request has no body: send a PDF.")
        raise unsupported_content_type(kind, encodings)
    if kind == MULTIPART and "boundary=" not in (request.META.get("CONTENT_TYPE") or ""):
        raise ServiceError(ErrorCode.MULTIPART_MALFORMED, "The multipart/form-data Content-Type has no boundary.")
    return kind


def raw_pdf_only(request: HttpRequest) -> None:
    """The body of a /raw operation is the PDF itself, as application/pdf or
    application/octet-stream; the latter is then read exactly as application/pdf.

    Raises `missing_source` for an empty body and 415 `unsupported_content_type` for any other
    Content-Type, before any byte of the body is read.
    """
    if check_content_type(request, RAW_ENCODINGS) == OCTET_STREAM:
        request.META["CONTENT_TYPE"] = PDF

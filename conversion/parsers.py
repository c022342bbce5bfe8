"""DRF parsers of the three body encodings of decisions.md 1, one per encoding.

Each reads the body that `conversion.intake.spool_body` put on disk (the `spooled` entry of the
parser context, never the socket) and yields one `ParsedSource`: the PDF (an upload on disk, or
a stored file's id) and the request's other members as sent, for the encoding's input
serializer (`members` in the parser context, see `conversion.inputs`) to validate. A parser
refuses what is wrong with the request's shape: syntax, the source, members the serializer
does not name, query parameters beside a body.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http import HttpRequest
from django.http.multipartparser import MultiPartParser, MultiPartParserError
from rest_framework.parsers import BaseParser
from rest_framework.request import Request

from conversion.intake import JSON, JSON_BODY_LIMIT, MULTIPART, OCTET_STREAM, PDF, SpooledBody, too_large
from core.errors import ErrorCode, ServiceError, caller_text


@dataclass
class Upload:
    """A PDF received in the request, on disk."""

    path: Path
    size: int
    sha256: str
    filename: str = ""


@dataclass
class ParsedSource:
    """What a parser yields: the source and the other members as sent (not yet validated)."""

    encoding: str
    upload: Upload | None = None
    file_id: str | None = None
    members: dict[str, Any] = field(default_factory=dict)
    temporary: list[Path] = field(default_factory=list)

    def close(self) -> None:
        for path in self.temporary:
            path.unlink(missing_ok=True)


_SOURCE_MEMBERS = ("file_id", "url", "base64")


class SpooledBodyParser(BaseParser):
    """A parser of the spooled body: the parser context names it (`spooled`) and the input
    serializer of the encoding (`members`); `stream` reads it from the start."""

    def parse(
        self, stream: IO[Any] | None, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:  # DRF's request.data is whatever the parser yields: here a ParsedSource
        context = parser_context or {}
        request: Request = context["request"]
        return self.read(request._request, stream, context["spooled"], context["members"])

    def read(self, request: HttpRequest, stream: IO[Any] | None, body: SpooledBody, members: Any) -> ParsedSource:
        raise NotImplementedError


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


def json_strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
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
    for text, where in json_strings(value, path):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            param = caller_text(where) or None
            raise ServiceError(
                ErrorCode.MALFORMED_JSON,
                f"The string at `{param or 'the body'}` contains an unpaired surrogate escape; send valid Unicode.",
                param=param,
            ) from exc


class JsonSourceParser(SpooledBodyParser):
    """application/json: `{"file_id": ..., "options": ..., ...}`, at most 256 KiB."""

    media_type = JSON

    def read(self, request: HttpRequest, stream: IO[Any] | None, body: SpooledBody, members: Any) -> ParsedSource:
        _refuse_query(request)
        if body.size > JSON_BODY_LIMIT:
            raise too_large(JSON_BODY_LIMIT, "JSON body")
        try:
            data = json.loads(stream.read() if stream is not None else b"")
        except (ValueError, RecursionError) as exc:
            raise ServiceError(ErrorCode.MALFORMED_JSON, "The request body is not valid JSON.") from exc
        _check_unicode(data, "")
        if not isinstance(data, dict):
            raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, "The JSON body must be an object.")
        _sources([name for name in _SOURCE_MEMBERS if name in data])
        allowed = members().fields
        for name in data:
            if name not in allowed and name not in _SOURCE_MEMBERS:
                raise ServiceError(
                    ErrorCode.UNKNOWN_PARAMETER, f"Unknown member {caller_text(name)!r}.", param=caller_text(name)
                )
        if "file_id" not in data:
            raise ServiceError(
                ErrorCode.MISSING_SOURCE, "No PDF: send `file_id` of a stored file, or upload the bytes."
            )
        if not isinstance(data["file_id"], str):
            raise ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, "`file_id` must be a string.", param="file_id")
        return ParsedSource(
            encoding=JSON, file_id=data["file_id"], members={k: v for k, v in data.items() if k in allowed}
        )


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


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


class MultipartSourceParser(SpooledBodyParser):
    """multipart/form-data: a `file` part (or `file_id`), and text parts for the other members
    (those the serializer lists in `json_text` hold JSON). Parts go straight to disk."""

    media_type = MULTIPART

    def read(self, request: HttpRequest, stream: IO[Any] | None, body: SpooledBody, members: Any) -> ParsedSource:
        _refuse_query(request)
        if not _closing_delimiter_present(request, body):
            raise ServiceError(
                ErrorCode.MULTIPART_MALFORMED,
                "The multipart/form-data body does not end with its closing boundary (cut short?).",
            )
        meta = {**request.META, "CONTENT_LENGTH": str(body.size)}
        handlers = [TemporaryFileUploadHandler(request)]
        try:
            # The spooled body reads as the request's own stream would.
            fields, files = MultiPartParser(meta, stream, handlers, request.encoding).parse()  # type: ignore[arg-type]
        except (MultiPartParserError, TooManyFieldsSent, TooManyFilesSent, UnicodeDecodeError, ValueError) as exc:
            raise ServiceError(ErrorCode.MULTIPART_MALFORMED, "The multipart/form-data body does not parse.") from exc
        except RequestDataTooBig as exc:
            raise ServiceError(
                ErrorCode.MULTIPART_MALFORMED, "A text part of the multipart body is too large."
            ) from exc
        try:
            return self._parsed(request, body, members, fields, files)
        finally:
            # Django's parts are temporary files deleted on close; the upload kept (if any) is a
            # link of its own that the ParsedSource deletes. Nothing else outlives the request.
            for _, parts in files.lists():
                for part in parts:
                    part.close()

    def _parsed(self, request: HttpRequest, body: SpooledBody, members: Any, fields: Any, files: Any) -> ParsedSource:
        received = sum(len(values) for _, values in fields.lists()) + sum(len(values) for _, values in files.lists())
        if received < _part_count(request, body):
            # Django's parser skips a part without a usable name; nothing the client sent is ignored.
            raise ServiceError(
                ErrorCode.MULTIPART_MALFORMED,
                "A part of the multipart body could not be read: each part needs "
                '`Content-Disposition: form-data; name="..."` (a UTF-8 name), and a file part a filename.',
            )
        parsed = ParsedSource(encoding=MULTIPART)
        allowed = members().fields
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
                raise ServiceError(
                    ErrorCode.INVALID_PARAMETER_TYPE, f"Part {param!r} appears more than once.", param=param
                )
        present = (["file"] if uploaded or "file" in fields else []) + [n for n in _SOURCE_MEMBERS if n in fields]
        _sources(present)
        if not present:
            raise ServiceError(ErrorCode.MISSING_SOURCE, "No PDF: add a part named `file` with the PDF bytes.")
        if not uploaded and "file" in fields:
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                "The `file` part must be a file (with a filename), not a text field.",
                param="file",
            )
        for name in allowed:
            if name in fields:
                text = str(fields[name])
                parsed.members[name] = _json_value(text, name) if name in members.json_text else text
        if uploaded:
            # Last, once nothing else can refuse the request: a link to the spooled part outlives
            # the part (deleted when it is closed) and is deleted with the ParsedSource.
            part = uploaded[0]
            temp_path = Path(part.temporary_file_path())
            kept = temp_path.with_name(temp_path.name + ".pdf")
            os.link(temp_path, kept)
            parsed.temporary.append(kept)
            try:
                parsed.upload = Upload(
                    path=kept, size=part.size, sha256=_sha256_file(kept), filename=caller_text(part.name or "")
                )
            except BaseException:
                parsed.close()
                raise
        else:
            parsed.file_id = str(fields["file_id"])
        return parsed


def _header_text(value: str) -> str:
    """A header value as the client wrote it: WSGI hands headers over as Latin-1, but clients send
    non-ASCII text (a password, a metadata value) as UTF-8. Bytes that are not UTF-8 stay Latin-1."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


class PdfSourceParser(SpooledBodyParser):
    """application/pdf: the body is the PDF (the spooled body itself is the upload, no copy is
    made); the other members are query parameters and the serializer's `headers`."""

    media_type = PDF

    def read(self, request: HttpRequest, stream: IO[Any] | None, body: SpooledBody, members: Any) -> ParsedSource:
        # The declared members (the headers are added per instance): no serializer is built for it.
        allowed_query = [name for name in members._declared_fields if name not in members.headers]
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
        parsed = ParsedSource(encoding=PDF, upload=Upload(path=body.path, size=body.size, sha256=body.sha256))
        parsed.members = {name: request.GET[name] for name in request.GET}
        for header in members.headers:
            value = request.META.get("HTTP_" + header.upper().replace("-", "_"))
            if value is not None:
                text = _header_text(value)
                parsed.members[header] = _json_value(text, header) if header in members.json_text else text
        return parsed


class OctetStreamSourceParser(PdfSourceParser):
    """application/octet-stream on the /raw operations (what generated clients send for a
    binary body): read exactly as application/pdf."""

    media_type = OCTET_STREAM

"""The pipeline every idempotent endpoint runs once, in the API base view of conversion (where
idempotency records live): check the encoding and the requests meter before reading the body,
spool it within the deadline and the size limit, settle the Idempotency-Key on its digest (a
replay answers the stored response and counts against no meter), then the gate and the uploads
meter; for an endpoint that takes a document, its own meters, parsing by the DRF parser of the
encoding, validation by the encoding's input serializer, the debug policy, and a concurrency slot
while the endpoint works on a typed `DocumentRequest`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from rest_framework import serializers
from rest_framework.parsers import BaseParser
from rest_framework.request import Request

from accounts.authentication import Caller, caller_of
from billing.gate import request_gate
from billing.limits import MeterName
from billing.meters import concurrency_acquire, concurrency_release, meter_consume, meter_require, record
from conversion.files import file_get
from conversion.idempotency import idempotency_begin
from conversion.inputs import (
    FileQuerySerializer,
    JsonMembersSerializer,
    NoMembersSerializer,
    PartsMembersSerializer,
    RawPdfMembersSerializer,
)
from conversion.intake import (
    JSON,
    MULTIPART,
    OCTET_STREAM,
    PDF,
    SpooledBody,
    check_content_type,
    declared_length,
    spool_body,
)
from conversion.options import Options, offered_engines
from conversion.parsers import (
    JsonSourceParser,
    MultipartSourceParser,
    OctetStreamSourceParser,
    ParsedSource,
    PdfSourceParser,
)
from conversion.store import Source
from core.api import ApiView
from core.context import context_of
from core.edge import client_gone
from core.errors import ErrorCode, ServiceError
from core.handlers import request_id_of

MemberSerializers = dict[str, type[serializers.BaseSerializer[Any]]]

# The three encodings of decisions.md 1, and the raw PDF alone (the /raw operations).
DOCUMENT_PARSERS: tuple[type[BaseParser], ...] = (MultipartSourceParser, JsonSourceParser, PdfSourceParser)
RAW_PARSERS: tuple[type[BaseParser], ...] = (PdfSourceParser, OctetStreamSourceParser)
DOCUMENT_MEMBERS: MemberSerializers = {
    MULTIPART: PartsMembersSerializer,
    JSON: JsonMembersSerializer,
    PDF: RawPdfMembersSerializer,
    OCTET_STREAM: RawPdfMembersSerializer,
}
FILE_MEMBERS: MemberSerializers = {
    MULTIPART: NoMembersSerializer,
    PDF: FileQuerySerializer,
    OCTET_STREAM: FileQuerySerializer,
}


@dataclass(frozen=True)
class DocumentRequest:
    """What a document endpoint works on: the caller, the source and the validated members."""

    caller: Caller
    raw: HttpRequest
    source: ParsedSource
    options: Options
    password: str | None = None
    metadata: dict[str, Any] | None = None
    debug: bool = False
    # POST /v1/files/raw: the query parameter naming the stored file.
    filename: str | None = None
    # POST /v2/jobs: the object echoed in the job and its webhook events.
    webhook_metadata: dict[str, Any] | None = None

    @property
    def request_id(self) -> str:
        return request_id_of(self.raw)

    def client_gone(self) -> bool:
        """Whether the client closed its connection while the request works."""
        return client_gone(self.raw)


class IdempotentApi(ApiView):
    """An endpoint whose answer is stored under the request's Idempotency-Key."""

    def idempotent(
        self, request: Request, work: Callable[[SpooledBody], Any], *, limit: int, what: str = "request body"
    ) -> Any:
        """`work(body)` on the spooled body, or the stored response when this request replays an
        Idempotency-Key. A first attempt's claim is left in the request's context, settled by
        ApiView.finalize_response; the spooled body is deleted when `work` returns."""
        caller = caller_of(request)
        raw: HttpRequest = request._request
        # Refuse over-limit callers before reading the body; count only once it is not a replay.
        meter_require(caller, MeterName.REQUESTS)
        declared = declared_length(raw, limit=limit, what=what)
        if declared > 0:
            meter_require(caller, MeterName.UPLOADS, declared)
        body = spool_body(raw, limit=limit, what=what)
        try:
            claim = idempotency_begin(caller=caller, request=raw, body_sha256=body.sha256)
            if isinstance(claim, HttpResponse):
                return claim
            if claim is not None:
                context_of(raw).idempotency_claim = claim
            request_gate(raw, caller)
            if body.size:
                record(raw, meter_consume(caller, MeterName.UPLOADS, body.size))
            return work(body)
        finally:
            body.close()


def _raw_operation(path: str) -> str | None:
    """The raw operation beside the endpoint at `path` (`/v1/convert` -> `/v1/convert/raw`),
    or None when there is none (or `path` is one)."""
    raw = path.rstrip("/") + "/raw"
    if path.rstrip("/").endswith("/raw"):
        return None
    try:
        resolve(raw)
    except Resolver404:
        return None
    return raw


class DocumentApi(IdempotentApi):
    """An endpoint that takes a document (convert, inspect, toc, file upload): `post` runs the
    pipeline and calls `perform` with the `DocumentRequest`, holding a concurrency slot.

    `parser_classes` are the encodings accepted (415 `unsupported_content_type` for any other,
    before the body is read); `members` the input serializer of each; `upload_limit` the
    setting that bounds the body."""

    parser_classes: Sequence[type[BaseParser]] = DOCUMENT_PARSERS
    members: ClassVar[MemberSerializers] = DOCUMENT_MEMBERS
    upload_limit: ClassVar[str] = "SVCX_CONVERT_UPLOAD_LIMIT"

    def post(self, request: Request) -> Any:
        encodings = tuple(parser.media_type for parser in request.parsers or ())
        check_content_type(request._request, encodings, _raw_operation(request.path))
        limit = int(getattr(settings, self.upload_limit))
        return self.idempotent(request, lambda body: self._take(request, body), limit=limit, what="upload")

    def admit(self, caller: Caller, raw: HttpRequest) -> None:
        """The endpoint's own meters, counted once the request is known not to replay, before
        the body is parsed. None by default."""

    def perform(self, document: DocumentRequest) -> Any:
        raise NotImplementedError

    def _take(self, request: Request, body: SpooledBody) -> Any:
        caller = caller_of(request)
        raw: HttpRequest = request._request
        self.admit(caller, raw)
        parser = self.get_content_negotiator().select_parser(request, request.parsers or ())
        assert parser is not None  # check_content_type admitted only the parsers' types
        members = self.members[parser.media_type]
        context = {**request.parser_context, "spooled": body, "members": members}
        with body.path.open("rb") as stream:
            source = parser.parse(stream, request.content_type, context)
        assert isinstance(source, ParsedSource)
        try:
            serializer = members(data=source.members)
            serializer.is_valid(raise_exception=True)
            valid: dict[str, Any] = serializer.validated_data
            document = DocumentRequest(
                caller=caller,
                raw=raw,
                source=source,
                options=organization_engine(valid.get("options") or Options(), caller),
                password=valid.get("password"),
                metadata=valid.get("metadata"),
                debug=valid.get("debug", False),
                filename=valid.get("filename"),
                webhook_metadata=valid.get("webhook_metadata"),
            )
            debug_check(document)
            with in_flight(raw, caller):
                return self.perform(document)
        finally:
            source.close()


def organization_engine(options: Options, caller: Caller) -> Options:
    """The options with the organization's default engine (set by the operator command) when the
    request chose none. A default the service does not offer (the operator turned the engine
    off) is not used: the service's default converts."""
    default = caller.organization.default_engine
    if options.engine is not None or not default or default not in offered_engines():
        return options
    return dataclasses.replace(options, engine=default)


def debug_check(document: DocumentRequest) -> None:
    """403 `debug_not_permitted` for `debug: true` while the organization's policy is disabled."""
    if document.debug and document.caller.organization.debug_policy == "disabled":
        raise ServiceError(
            ErrorCode.DEBUG_NOT_PERMITTED,
            "debug: true is refused: the organization's debug policy is disabled. Send the request without debug.",
            param="debug",
        )


def resolved_source(document: DocumentRequest) -> Source:
    """The PDF the request names: its upload, or the caller's stored file (404 / 410), which
    stays in the store for the worker to fetch."""
    upload = document.source.upload
    if upload is not None:
        return Source(sha256=upload.sha256, path=upload.path, filename=upload.filename or "")
    stored = file_get(caller=document.caller, file_id=document.source.file_id or "")
    if stored.content_type != PDF:
        raise ServiceError(
            ErrorCode.PDF_INVALID,
            f"The file {stored.id} is a {stored.content_type} picture (a figure a conversion cropped), not a PDF.",
            param="file_id",
        )
    return Source(sha256=stored.sha256, key=stored.storage_name, filename=stored.filename)


@contextmanager
def in_flight(raw: HttpRequest, caller: Caller) -> Iterator[None]:
    """Hold one of the organization's concurrency slots while the request works."""
    state = concurrency_acquire(caller, request_id_of(raw))
    record(raw, state)
    try:
        yield
    finally:
        concurrency_release(caller, request_id_of(raw))

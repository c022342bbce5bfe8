"""POST /v1/files, GET and DELETE /v1/files/{id}, POST /v1/inspect, POST /v1/toc."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import Caller, caller_of
from accounts.scopes import FILES_READ, FILES_WRITE, INSPECT
from billing.limits import STORAGE_BYTES, MeterName, limit_for
from billing.meters import meter_consume, meter_require, record
from conversion import engine
from conversion.api import (
    IDEMPOTENCY_PARAMETER,
    RAW_DESCRIPTION,
    RAW_PDF_PARAMETERS,
    RAW_REQUEST_SCHEMA,
    document_request_schema,
)
from conversion.files import file_create, file_delete, file_get, storage_used
from conversion.intake import INTAKE_ERRORS, MULTIPART, PDF, ParsedBody, parse_body, raw_pdf_only
from conversion.jobs import job_execute
from conversion.models import ConversionJob
from conversion.options import validate_options
from conversion.requests import debug_check, idempotent_body, in_flight, resolved_source
from conversion.serializers import FileDeletedSerializer, InspectionSerializer, StoredFileSerializer, TocSerializer
from conversion.store import Source
from core.api import ApiView
from core.errors import ErrorCode, ServiceError
from core.formats import refuse_unknown_query

DOCUMENT_ERRORS: tuple[ErrorCode, ...] = (
    ErrorCode.PDF_INVALID,
    ErrorCode.PDF_CORRUPT,
    ErrorCode.PDF_READ_ERROR,
    ErrorCode.PDF_PARSE_FAILED,
    ErrorCode.PDF_PASSWORD_INCORRECT,
    ErrorCode.PDF_UNSUPPORTED_SECURITY,
    ErrorCode.PDF_TOO_COMPLEX,
    ErrorCode.PDF_NO_PAGES,
)


class FileCreateApi(ApiView):
    """Store a PDF (up to 128 MiB) for later conversions by `file_id`, as a multipart `file` part
    or a raw application/pdf body (optional query parameter `filename`). Stored files expire after
    7 days. The upload must complete within 20 seconds of its first byte."""

    required_scope = FILES_WRITE
    error_codes = (*INTAKE_ERRORS, ErrorCode.STORAGE_QUOTA_EXCEEDED, ErrorCode.PDF_INVALID)

    @extend_schema(
        summary="Upload a file",
        parameters=[IDEMPOTENCY_PARAMETER],
        request={"multipart/form-data": inline_serializer("FileUpload", {"file": serializers.FileField()})},
        responses={201: StoredFileSerializer},
    )
    def post(self, request: Request) -> Any:
        caller = caller_of(request)
        raw: HttpRequest = request._request
        with idempotent_body(
            raw, caller, limit=int(settings.SVCX_FILES_UPLOAD_LIMIT), encodings=(MULTIPART, PDF)
        ) as body:
            if isinstance(body, HttpResponse):
                return body
            parsed = parse_body(raw, body, allowed=(), allowed_query=("filename",))
            try:
                with in_flight(raw, caller):
                    return self._store(caller, raw, parsed)
            finally:
                parsed.close()

    def _store(self, caller: Caller, raw: HttpRequest, parsed: ParsedBody) -> Response:
        if parsed.upload is None:
            raise ServiceError(
                ErrorCode.MISSING_SOURCE, "Upload the PDF bytes: a multipart `file` part or an application/pdf body."
            )
        upload = parsed.upload
        quota = limit_for(caller.organization, STORAGE_BYTES)
        used = storage_used(organization=caller.organization, environment=caller.environment)
        if used + upload.size > quota:  # checked again, under a lock, when storing
            raise ServiceError(
                ErrorCode.STORAGE_QUOTA_EXCEEDED,
                f"Storing {upload.size} bytes would exceed the {quota}-byte storage quota ({used} used). "
                "Delete files you no longer need.",
                details={"quota_bytes": quota, "used_bytes": used, "needed_bytes": upload.size},
            )
        job = job_execute(
            raw=raw,
            caller=caller,
            kind=ConversionJob.Kind.FILE,
            source=Source(sha256=upload.sha256, path=upload.path),
            password=None,
        )
        record = file_create(
            caller=caller,
            source=upload.path,
            size=upload.size,
            sha256=upload.sha256,
            filename=parsed.options.get("filename") or upload.filename,
            page_count=(job.result or {}).get("page_count"),
        )
        return Response(StoredFileSerializer(record).data, status=201)


class FileDetailApi(ApiView):
    """Read (scope files:read) or delete (scope files:write) a stored file. A file of another
    organization or environment is 404 `file_not_found`; one past retention is 410 `file_expired`."""

    error_codes = (
        ErrorCode.FILE_NOT_FOUND,
        ErrorCode.FILE_EXPIRED,
        ErrorCode.IDEMPOTENCY_CONFLICT,
        ErrorCode.IDEMPOTENCY_IN_PROGRESS,
    )

    method_scopes = {"GET": FILES_READ, "HEAD": FILES_READ, "DELETE": FILES_WRITE}

    @extend_schema(summary="Read a file", responses={200: StoredFileSerializer})
    def get(self, request: Request, file_id: str) -> Response:
        refuse_unknown_query(request.query_params, set())
        return Response(StoredFileSerializer(file_get(caller=caller_of(request), file_id=file_id)).data)

    @extend_schema(
        summary="Delete a file",
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={200: FileDeletedSerializer},
    )
    def delete(self, request: Request, file_id: str) -> Any:
        refuse_unknown_query(request.query_params, set())
        caller = caller_of(request)
        raw: HttpRequest = request._request
        # A body means nothing here; a small one (some clients send `{}`) is ignored.
        with idempotent_body(raw, caller, limit=DELETE_BODY_LIMIT, encodings=None) as body:
            if isinstance(body, HttpResponse):
                return body
            record = file_delete(organization=caller.organization, environment=caller.environment, file_id=file_id)
            return Response(FileDeletedSerializer(record).data)


DELETE_BODY_LIMIT = 64 * 1024


class FileCreateRawApi(FileCreateApi):
    """Store a PDF sent as the raw body. The same as POST /v1/files."""

    @extend_schema(
        summary="Upload a raw PDF body",
        description="The body is the PDF itself, sent as application/octet-stream or application/pdf (the same "
        "as an application/pdf body on POST /v1/files); `filename` names it.",
        parameters=[
            IDEMPOTENCY_PARAMETER,
            OpenApiParameter("filename", {"type": "string", "maxLength": 255}, description="The file's name."),
        ],
        request=RAW_REQUEST_SCHEMA,
        responses={201: StoredFileSerializer},
    )
    def post(self, request: Request) -> Any:
        raw_pdf_only(request._request)
        return super().post(request)


def _document_job(request: Request, kind: str) -> tuple[ConversionJob, ParsedBody]:
    """Run an inspect or toc job for the request, with its meters; a replay raises _Replay."""
    caller = caller_of(request)
    raw: HttpRequest = request._request
    with idempotent_body(raw, caller, limit=int(settings.SVCX_CONVERT_UPLOAD_LIMIT)) as body:
        if isinstance(body, HttpResponse):
            raise _Replay(body)
        if kind == ConversionJob.Kind.INSPECT:
            record(raw, meter_consume(caller, MeterName.INSPECT))
            if int(settings.SVCX_INSPECT_SAMPLE_PAGES):
                meter_require(caller, MeterName.INSPECT_SAMPLE_PAGES)
        else:
            record(raw, meter_consume(caller, MeterName.TOC))
        # The same members as /v1/convert (decisions.md 1): options are checked as for a
        # conversion (on inspect, `pages` chooses the sampled pages), metadata is echoed.
        parsed = parse_body(raw, body)
        try:
            options = validate_options(parsed.options, prefix=parsed.options_prefix)
            debug_check(caller, parsed)
            with in_flight(raw, caller):
                job = job_execute(
                    raw=raw,
                    caller=caller,
                    kind=kind,
                    source=resolved_source(caller, parsed),
                    password=parsed.password,
                    options=options,
                    debug=parsed.debug,
                )
        finally:
            parsed.close()
        if kind == ConversionJob.Kind.INSPECT:
            sampled = len((job.result or {}).get("pages", []))
            if sampled:
                meter_consume(caller, MeterName.INSPECT_SAMPLE_PAGES, sampled, enforce=False)
        return job, parsed


def _document_answer(job: ConversionJob, parsed: ParsedBody) -> dict[str, Any]:
    """The worker's result with what the request echoes (None: left out of the body)."""
    debug: dict[str, Any] | None = None
    if parsed.debug:
        seconds = (job.finished_at - job.started_at).total_seconds() if job.finished_at and job.started_at else None
        debug = {"engine": {"id": engine.ENGINE_ID, "version": engine.ENGINE_VERSION}, "worker_seconds": seconds}
    return {**(job.result or {}), "metadata": parsed.metadata, "debug": debug}


class _Replay(Exception):
    def __init__(self, response: HttpResponse) -> None:
        self.response = response


class InspectApi(ApiView):
    """Inspect a document for free before converting it: page count, PDF version, encryption,
    whether extraction is allowed, XFA, outline size, and a text-layer sample of the first pages.
    An encrypted file without its password is inspected (`password_required: true`), not refused.
    Takes the same three encodings and members as /v1/convert: options are checked as for a
    conversion and `pages` chooses the sampled pages; `metadata` is echoed."""

    required_scope = INSPECT
    error_codes = (*INTAKE_ERRORS, *DOCUMENT_ERRORS, ErrorCode.RATE_LIMIT_INSPECT)

    @extend_schema(
        summary="Inspect a PDF",
        parameters=[IDEMPOTENCY_PARAMETER],
        request=document_request_schema("Inspect"),
        responses={200: InspectionSerializer},
    )
    def post(self, request: Request) -> Any:
        try:
            job, parsed = _document_job(request, ConversionJob.Kind.INSPECT)
        except _Replay as replay:
            return replay.response
        return Response(InspectionSerializer(_document_answer(job, parsed)).data)


class TocApi(ApiView):
    """The document outline (bookmarks) as `entries: [{level, title, page}]`, with pages resolved
    from destinations and named destinations; empty when the document has none. Bills nothing."""

    required_scope = INSPECT
    error_codes = (*INTAKE_ERRORS, *DOCUMENT_ERRORS, ErrorCode.PDF_ENCRYPTED, ErrorCode.RATE_LIMIT_TOC)

    @extend_schema(
        summary="Read the table of contents",
        parameters=[IDEMPOTENCY_PARAMETER],
        request=document_request_schema("Toc"),
        responses={200: TocSerializer},
    )
    def post(self, request: Request) -> Any:
        try:
            job, parsed = _document_job(request, ConversionJob.Kind.TOC)
        except _Replay as replay:
            return replay.response
        return Response(TocSerializer(_document_answer(job, parsed)).data)


class InspectRawApi(InspectApi):
    """Inspect a PDF sent as the raw body. The same as POST /v1/inspect."""

    @extend_schema(
        summary="Inspect a raw PDF body",
        description=RAW_DESCRIPTION,
        parameters=[IDEMPOTENCY_PARAMETER, *RAW_PDF_PARAMETERS],
        request=RAW_REQUEST_SCHEMA,
        responses={200: InspectionSerializer},
    )
    def post(self, request: Request) -> Any:
        raw_pdf_only(request._request)
        return super().post(request)


class TocRawApi(TocApi):
    """The outline of a PDF sent as the raw body. The same as POST /v1/toc."""

    @extend_schema(
        summary="Read the table of contents of a raw PDF body",
        description=RAW_DESCRIPTION,
        parameters=[IDEMPOTENCY_PARAMETER, *RAW_PDF_PARAMETERS],
        request=RAW_REQUEST_SCHEMA,
        responses={200: TocSerializer},
    )
    def post(self, request: Request) -> Any:
        raw_pdf_only(request._request)
        return super().post(request)

"""POST /v1/files, GET and DELETE /v1/files/{id}, POST /v1/inspect, POST /v1/toc."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from django.conf import settings
from django.http import FileResponse, HttpRequest
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import Caller, caller_of
from accounts.scopes import FILES_READ, FILES_WRITE, INSPECT
from billing.limits import STORAGE_BYTES, MeterName, limit_for
from billing.meters import meter_consume, meter_require, record
from conversion import engine
from conversion.api import IDEMPOTENCY_PARAMETER, RAW_REQUEST_SCHEMA, document_schema, post_schema
from conversion.files import file_content_open, file_create, file_delete, file_get, storage_used
from conversion.intake import INTAKE_ERRORS
from conversion.models import ConversionJob
from conversion.parsers import MultipartSourceParser, PdfSourceParser
from conversion.requests import (
    FILE_MEMBERS,
    RAW_PARSERS,
    DocumentApi,
    DocumentRequest,
    IdempotentApi,
    resolved_source,
)
from conversion.serializers import FileDeletedSerializer, InspectionSerializer, StoredFileSerializer, TocSerializer
from conversion.services import Submission, job_execute
from conversion.store import Source
from core.api import ApiView
from core.errors import ErrorCode, ServiceError
from core.inputs import NoQuery, query_of

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


@post_schema(
    summary="Upload a file",
    parameters=[IDEMPOTENCY_PARAMETER],
    request={"multipart/form-data": inline_serializer("FileUpload", {"file": serializers.FileField()})},
    responses={201: StoredFileSerializer},
)
class FileCreateApi(DocumentApi):
    """Store a PDF (up to 128 MiB) for later conversions by `file_id`, as a multipart `file` part
    or a raw application/pdf body (optional query parameter `filename`). Stored files expire after
    7 days. The upload must complete within 20 seconds of its first byte."""

    required_scope = FILES_WRITE
    error_codes = (*INTAKE_ERRORS, ErrorCode.STORAGE_QUOTA_EXCEEDED, ErrorCode.PDF_INVALID)
    parser_classes: Sequence[type[BaseParser]] = (MultipartSourceParser, PdfSourceParser)
    members = FILE_MEMBERS
    upload_limit = "SVCX_FILES_UPLOAD_LIMIT"

    def perform(self, document: DocumentRequest) -> Response:
        caller, upload = document.caller, document.source.upload
        if upload is None:
            raise ServiceError(
                ErrorCode.MISSING_SOURCE, "Upload the PDF bytes: a multipart `file` part or an application/pdf body."
            )
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
            caller=caller,
            request_id=document.request_id,
            is_client_gone=document.client_gone,
            submission=Submission(
                kind=ConversionJob.Kind.FILE, source=Source(sha256=upload.sha256, path=upload.path), password=None
            ),
        )
        record = file_create(
            caller=caller,
            source=upload.path,
            size=upload.size,
            sha256=upload.sha256,
            filename=document.filename or upload.filename,
            page_count=(job.result or {}).get("page_count"),
        )
        return Response(StoredFileSerializer(record).data, status=201)


class FileDetailApi(IdempotentApi):
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
        query_of(request, NoQuery)
        return Response(StoredFileSerializer(file_get(caller=caller_of(request), file_id=file_id)).data)

    @extend_schema(
        summary="Delete a file",
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={200: FileDeletedSerializer},
    )
    def delete(self, request: Request, file_id: str) -> Any:
        query_of(request, NoQuery)
        caller = caller_of(request)

        def deleted(body: object) -> Response:
            record = file_delete(organization=caller.organization, environment=caller.environment, file_id=file_id)
            return Response(FileDeletedSerializer(record).data)

        # A body means nothing here; a small one (some clients send `{}`) is ignored.
        return self.idempotent(request, deleted, limit=DELETE_BODY_LIMIT)


DELETE_BODY_LIMIT = 64 * 1024


FILE_CONTENT_TEXT = "The file's bytes: application/pdf for an uploaded PDF, image/png for a figure's picture."


class FileContentApi(ApiView):
    """The bytes of a stored file (scope files:read), as they were stored, with their type as
    Content-Type: an uploaded PDF (application/pdf), or a figure's picture a conversion cropped
    with `figures: "crop"` (image/png). Errors are JSON envelopes: a file of another organization
    or environment, or a deleted one, is 404 `file_not_found`; one past retention 410 `file_expired`."""

    required_scope = FILES_READ
    error_codes = (ErrorCode.FILE_NOT_FOUND, ErrorCode.FILE_EXPIRED)

    @extend_schema(
        operation_id="files_content",
        summary="Download a file's content",
        responses={
            # application/octet-stream: what generic clients (openapi-python-client) read as
            # bytes; the answer's own Content-Type is one of the other two.
            (200, media): OpenApiResponse(OpenApiTypes.BINARY, description=FILE_CONTENT_TEXT)
            for media in ("application/pdf", "image/png", "application/octet-stream")
        },
    )
    def get(self, request: Request, file_id: str) -> Any:
        query_of(request, NoQuery)
        record, handle = file_content_open(caller=caller_of(request), file_id=file_id)
        # Streamed from the store, closed by the response once sent.
        response = FileResponse(
            handle, content_type=record.content_type, as_attachment=True, filename=record.filename or record.id
        )
        response["Cache-Control"] = "private, no-store"
        return response


@post_schema(
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
class FileCreateRawApi(FileCreateApi):
    """Store a PDF sent as the raw body. The same as POST /v1/files."""

    parser_classes = RAW_PARSERS


class DocumentJobApi(DocumentApi):
    """Inspect and toc: one job of `kind` on the document, answered by `answer`. The same
    members as /v1/convert (decisions.md 1): options are checked as for a conversion (on
    inspect, `pages` chooses the sampled pages), metadata is echoed."""

    kind: ClassVar[str]
    answer: ClassVar[type[serializers.Serializer]]
    # Version 2's pre-flight: the worker also says which pages OCR would read (Submission.estimate).
    estimate: ClassVar[bool] = False

    def perform(self, document: DocumentRequest) -> Response:
        return Response(self.answer(document_answer(self.run_job(document), document)).data)

    def run_job(self, document: DocumentRequest) -> ConversionJob:
        return job_execute(
            caller=document.caller,
            request_id=document.request_id,
            is_client_gone=document.client_gone,
            submission=Submission(
                kind=self.kind,
                source=resolved_source(document),
                password=document.password,
                options=document.options,
                debug=document.debug,
                estimate=self.estimate,
            ),
        )


def document_answer(job: ConversionJob, parsed: DocumentRequest) -> dict[str, Any]:
    """The worker's result with what the request echoes (None: left out of the body)."""
    debug: dict[str, Any] | None = None
    if parsed.debug:
        seconds = (job.finished_at - job.started_at).total_seconds() if job.finished_at and job.started_at else None
        engine_id = (job.options or {}).get("engine", engine.ENGINE_ID)
        debug = {"engine": {"id": engine_id, "version": engine.ENGINES[engine_id]}, "worker_seconds": seconds}
    return {**(job.result or {}), "metadata": parsed.metadata, "debug": debug}


@document_schema("Inspect a PDF", {200: InspectionSerializer}, name="Inspect")
class InspectApi(DocumentJobApi):
    """Inspect a document for free before converting it: page count, PDF version, encryption,
    whether extraction is allowed, XFA, outline size, and a text-layer sample of the first pages.
    An encrypted file without its password is inspected (`password_required: true`), not refused.
    Takes the same three encodings and members as /v1/convert: options are checked as for a
    conversion and `pages` chooses the sampled pages; `metadata` is echoed."""

    required_scope = INSPECT
    error_codes = (*INTAKE_ERRORS, *DOCUMENT_ERRORS, ErrorCode.RATE_LIMIT_INSPECT, ErrorCode.ENGINE_NOT_FOUND)
    kind = ConversionJob.Kind.INSPECT
    answer = InspectionSerializer

    def admit(self, caller: Caller, raw: HttpRequest) -> None:
        record(raw, meter_consume(caller, MeterName.INSPECT))
        if int(settings.SVCX_INSPECT_SAMPLE_PAGES):
            meter_require(caller, MeterName.INSPECT_SAMPLE_PAGES)

    def perform(self, document: DocumentRequest) -> Response:
        return Response(self.answer(document_answer(self.inspected(document), document)).data)

    def inspected(self, document: DocumentRequest) -> ConversionJob:
        """The inspection's job, its sampled pages counted against their meter."""
        job = self.run_job(document)
        sampled = len((job.result or {}).get("pages", []))
        if sampled:
            meter_consume(document.caller, MeterName.INSPECT_SAMPLE_PAGES, sampled, enforce=False)
        return job


@document_schema("Read the table of contents", {200: TocSerializer}, name="Toc")
class TocApi(DocumentJobApi):
    """The document outline (bookmarks) as `entries: [{level, title, page}]`, with pages resolved
    from destinations and named destinations; empty when the document has none. Bills nothing."""

    required_scope = INSPECT
    error_codes = (
        *INTAKE_ERRORS,
        *DOCUMENT_ERRORS,
        ErrorCode.PDF_ENCRYPTED,
        ErrorCode.RATE_LIMIT_TOC,
        ErrorCode.ENGINE_NOT_FOUND,
    )
    kind = ConversionJob.Kind.TOC
    answer = TocSerializer

    def admit(self, caller: Caller, raw: HttpRequest) -> None:
        record(raw, meter_consume(caller, MeterName.TOC))


@document_schema("Inspect a raw PDF body", {200: InspectionSerializer})
class InspectRawApi(InspectApi):
    """Inspect a PDF sent as the raw body. The same as POST /v1/inspect."""

    parser_classes = RAW_PARSERS


@document_schema("Read the table of contents of a raw PDF body", {200: TocSerializer})
class TocRawApi(TocApi):
    """The outline of a PDF sent as the raw body. The same as POST /v1/toc."""

    parser_classes = RAW_PARSERS

"""Version 2 jobs: POST and GET /v2/jobs, GET /v2/jobs/{id}, GET /v2/jobs/{id}/result,
POST /v2/jobs/{id}/cancel (conversion.async_jobs says how a job runs and bills)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import Caller, caller_of
from accounts.scopes import CONVERT
from billing.api import PAGINATION_PARAMETERS, PageQuery
from billing.limits import MeterName
from billing.meters import OrgScope, meter_consume, record_peek
from conversion import engine
from conversion.api import (
    CONVERT_ERRORS,
    IDEMPOTENCY_PARAMETER,
    RAW_DESCRIPTION,
    SCAN_OPTIONS_SERIALIZER,
    SCAN_RAW_PDF_PARAMETERS,
    document_schema,
)
from conversion.api import document_request_schema as convert_request_schema
from conversion.async_jobs import JobSource, async_job_cancel, async_job_create, job_pages_so_far
from conversion.documents_api import InspectApi, document_answer
from conversion.files import file_get
from conversion.inputs import (
    JobJsonMembersSerializer,
    JobPartsMembersSerializer,
    JobRawPdfMembersSerializer,
    ScanJsonMembersSerializer,
    ScanPartsMembersSerializer,
    ScanRawPdfMembersSerializer,
)
from conversion.intake import JSON, MULTIPART, OCTET_STREAM, PDF
from conversion.models import ConversionJob, Job, new_job_id
from conversion.options import Options, engine_error, figures_options
from conversion.renderers import MarkdownRenderer
from conversion.requests import RAW_PARSERS, DocumentApi, DocumentRequest, MemberSerializers, resolved_source
from conversion.selectors import job_get, job_list, job_result_get, job_result_require
from conversion.serializers import JobInspectionSerializer, JobListSerializer, JobResultSerializer, JobSerializer
from conversion.services import (
    WORK_METERS,
    Submission,
    conversion_meters_charge,
    conversion_meters_give_back,
    conversion_meters_require,
    conversion_price,
    figures_scope_require,
    job_execute,
)
from conversion.store import Store, object_put
from core.api import ApiView
from core.errors import ErrorCode, ServiceError
from core.inputs import NoQuery, StringField, query_of
from core.negotiation import AcceptNegotiation
from core.serializers import ListPage

JOB_MEMBERS: MemberSerializers = {
    MULTIPART: JobPartsMembersSerializer,
    JSON: JobJsonMembersSerializer,
    PDF: JobRawPdfMembersSerializer,
    OCTET_STREAM: JobRawPdfMembersSerializer,
}
JOB_ERRORS: tuple[ErrorCode, ...] = (
    *(c for c in CONVERT_ERRORS if c != ErrorCode.CONVERSION_TIMEOUT),
    ErrorCode.OCR_LANGUAGE_NOT_AVAILABLE,
)
NDJSON = "application/x-ndjson"


def _job_request_schema() -> dict[str, Any]:
    """The multipart and JSON bodies of a conversion, with `webhook_metadata`."""
    return convert_request_schema(
        "Job",
        {
            "webhook_metadata": serializers.DictField(
                required=False, help_text="A JSON object (at most 4 KiB) echoed in the job and its webhook events."
            )
        },
        options=SCAN_OPTIONS_SERIALIZER,
    )


def _selected_pages(document: DocumentRequest, page_count: int) -> list[int]:
    try:
        return engine.select_pages(document.options.ranges, page_count)
    except engine.EngineError as exc:
        raise engine_error(exc, param=document.options.pages_param) from exc


@dataclass(frozen=True)
class Preflight:
    """What a version 2 request learns of its document before any work: its page count and,
    when asked (`estimate`), which selected pages OCR would read (None: not looked at), and
    whether that count is an upper bound (`upper_bound`: some pages were counted in unexamined)."""

    page_count: int
    ocr_pages: list[int] | None = None
    upper_bound: bool = False


def job_preflight(document: DocumentRequest, *, estimate: bool) -> Preflight:
    """The document's page count (and with `estimate`, the selected pages OCR would read): a
    stored file's count when nothing more is needed, else the pre-flight of the document on the
    interactive queue (no PDF is read in a web thread)."""
    caller = document.caller
    upload = document.source.upload
    if upload is None and not estimate:
        stored = file_get(caller=caller, file_id=document.source.file_id or "")
        if stored.page_count is not None and document.password is None:
            return Preflight(page_count=stored.page_count)
    job = job_execute(
        caller=caller,
        request_id=document.request_id,
        is_client_gone=document.client_gone,
        submission=Submission(
            kind=ConversionJob.Kind.FILE,
            source=resolved_source(document),
            password=document.password,
            options=document.options if estimate else None,
            estimate=estimate,
        ),
    )
    result = job.result or {}
    count = result.get("page_count")
    if not count:
        raise ServiceError(
            ErrorCode.PDF_ENCRYPTED, "The PDF is encrypted: send its password (`password`) to convert it."
        )
    found = result.get("estimate") or {}
    planned = found.get("ocr_pages")
    return Preflight(
        page_count=int(count),
        ocr_pages=None if planned is None else [int(p) for p in planned],
        upper_bound=bool(found.get("upper_bound")),
    )


def upper_bound_warning(ocr_pages: int) -> str:
    """What a job and an estimate say when the pre-flight ran out of time."""
    return (
        f"The pre-flight ran out of time before it looked at every page: the {ocr_pages} pages counted as read by "
        "OCR are an upper bound. The job bills the pages its result reads by OCR, never more than it holds."
    )


def ocr_page_count(options: Options, pages: list[int], planned: list[int] | None) -> int:
    """The selected pages a job reads by OCR, as held for: none with `ocr` off, every one when
    forced, those the pre-flight found with "auto"."""
    if options.ocr == "force":
        return len(pages)
    if options.ocr == "auto":
        return len(planned or [])
    return 0


class JobCreateMixin(DocumentApi):
    """POST /v2/jobs: a conversion of any length in the background."""

    required_scope = CONVERT
    spends_credits = True
    error_codes = JOB_ERRORS
    members: ClassVar[MemberSerializers] = JOB_MEMBERS

    def perform(self, document: DocumentRequest) -> Response:
        caller = document.caller
        figures_scope_require(caller=caller, options=document.options)
        conversion_meters_require(caller=caller, meters=WORK_METERS)
        options = document.options
        found = job_preflight(document, estimate=options.ocr == "auto")
        page_count = found.page_count
        pages = _selected_pages(document, page_count)
        limit = int(settings.SVCX_JOB_MAX_PAGES)
        if len(pages) > limit:
            param = document.options.pages_param
            raise ServiceError(
                ErrorCode.TOO_MANY_PAGES,
                f"The selection has {len(pages)} pages; a job converts at most {limit}. Select fewer with `{param}`, "
                f"for example `1-{limit}`, and create another job for the rest.",
                param=param,
                details={"pages_selected": len(pages), "max_pages": limit},
            )
        scope = OrgScope(organization=caller.organization, environment=caller.environment)
        try:
            charged = conversion_meters_charge(scope=scope, pages=len(pages))
        finally:
            record_peek(document.raw, caller, MeterName.PAGES)
        try:
            job = self._create(document, caller, options, pages, page_count, found)
        except BaseException:
            # No credits (402), the store or the database away: no job, nothing counted.
            conversion_meters_give_back(scope=scope, charged=charged)
            record_peek(document.raw, caller, MeterName.PAGES)
            raise
        return Response(JobSerializer(job).data, status=202, headers={"Location": f"/v2/jobs/{job.id}"})

    def _create(
        self,
        document: DocumentRequest,
        caller: Caller,
        options: Options,
        pages: list[int],
        page_count: int,
        found: Preflight,
    ) -> Job:
        """The job, its input stored and its credits held (402 without them)."""
        job_id = new_job_id()
        ocr_pages = ocr_page_count(options, pages, found.ocr_pages)
        upload = document.source.upload
        if upload is not None:
            name = upload.filename or ""
            source = JobSource(
                store=Store.ASYNC,
                key=object_put(Store.ASYNC, f"{job_id}/input.pdf", upload.path),
                sha256=upload.sha256,
                filename=upload.filename or "",
            )
        else:
            stored = resolved_source(document)
            source = JobSource(store=Store.FILES, key=stored.key, sha256=stored.sha256)
            name = stored.filename
        return async_job_create(
            job_id=job_id,
            organization=caller.organization,
            environment=caller.environment,
            api_key_id=caller.key_id,
            request_id=document.request_id,
            source=source,
            options={
                "pages": options.pages,
                "tables": options.tables,
                "fallback": options.fallback,
                "flavor": options.flavor,
                **({"chunking": list(options.chunking)} if options.chunking else {}),
                **({"engine": options.engine} if options.engine else {}),
                **figures_options(options, name),
                "ocr": options.ocr,
                "ocr_languages": list(options.ocr_languages),
            },
            pages=pages,
            page_count=page_count,
            ocr_pages=ocr_pages,
            warnings=[upper_bound_warning(ocr_pages)] if found.upper_bound and options.ocr == "auto" else [],
            password=document.password,
            webhook_metadata=document.webhook_metadata,
        )


SCAN_MEMBERS: MemberSerializers = {
    MULTIPART: ScanPartsMembersSerializer,
    JSON: ScanJsonMembersSerializer,
    PDF: ScanRawPdfMembersSerializer,
    OCTET_STREAM: ScanRawPdfMembersSerializer,
}
SCAN_OPTION_ERRORS = (
    ErrorCode.UNSUPPORTED_OPTION_VALUE,
    ErrorCode.ENGINE_NOT_FOUND,
    ErrorCode.OCR_NOT_AVAILABLE,
    ErrorCode.OCR_LANGUAGE_NOT_AVAILABLE,
)


def job_estimate(document: DocumentRequest, found: dict[str, Any] | None, warnings: list[str]) -> dict[str, Any] | None:
    """The estimate of a job from the pre-flight's `found` (conversion.runner: the selection and
    the pages OCR would read), priced for the caller; None when the document was not opened or
    the selection is longer than a job takes (then a warning says so)."""
    if found is None:
        return None
    selected = [int(p) for p in found["pages"]]
    planned = found.get("ocr_pages")
    if planned is None:
        limit = int(settings.SVCX_JOB_MAX_PAGES)
        warnings.append(
            f"The selection has {len(selected)} pages; a job converts at most {limit}, so none was estimated. "
            f"Select fewer with `{document.options.pages_param}`."
        )
        return None
    ocr = {int(p) for p in planned}
    price = conversion_price(caller=document.caller, pages=len(selected), ocr_pages=len(ocr))
    upper_bound = bool(found.get("upper_bound"))
    if upper_bound:
        warnings.append(upper_bound_warning(len(ocr)))
    return {
        "pages": len(selected),
        "ocr_pages": len(ocr),
        "upper_bound": upper_bound,
        "credits": price.credits,
        "credits_per_page": price.credits_per_page,
        "credits_per_ocr_page": price.credits_per_ocr_page,
        "plan": [{"page": page, "ocr": page in ocr} for page in selected],
    }


@document_schema("Inspect a PDF for a job", {200: JobInspectionSerializer}, name="JobInspect", scans=True)
class JobInspectApi(InspectApi):
    """Inspect a document for free before creating a job: everything POST /v1/inspect answers,
    and `estimate`, what a job with the same document and options would read by OCR and cost
    (per selected page, whether OCR reads it: with `ocr` "auto", by the same test the job
    applies). Takes the members and options of POST /v2/jobs (`pages`, `ocr`, `ocr_languages`)."""

    error_codes = (*InspectApi.error_codes, *SCAN_OPTION_ERRORS)
    members: ClassVar[MemberSerializers] = SCAN_MEMBERS
    answer = JobInspectionSerializer
    estimate = True

    def perform(self, document: DocumentRequest) -> Response:
        answer = document_answer(self.inspected(document), document)
        found = answer.pop("estimate", None)
        parsed = int((found or {}).get("parsed") or 0)
        if parsed:  # the pages the plan parsed count as sampled pages, as v1's samples do
            meter_consume(document.caller, MeterName.INSPECT_SAMPLE_PAGES, parsed, enforce=False)
        answer["estimate"] = job_estimate(document, found, answer.setdefault("warnings", []))
        return Response(JobInspectionSerializer(answer).data)


@document_schema("Inspect a raw PDF body for a job", {200: JobInspectionSerializer}, scans=True)
class JobInspectRawApi(JobInspectApi):
    """Inspect a PDF sent as the raw body for a job. The same as POST /v2/inspect."""

    parser_classes = RAW_PARSERS


class JobsQuery(PageQuery):
    status = StringField(required=False)

    def validate_status(self, value: str) -> str:
        if value not in Job.Status.values:
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`status` must be one of {', '.join(Job.Status.values)}.",
                param="status",
            )
        return value


class JobsApi(JobCreateMixin):
    """Create a job (POST) from the same three encodings and options as POST /v1/convert, plus
    `webhook_metadata`; or list the key's organization's jobs, newest first (GET).

    A job converts up to 5,000 pages in the background: 202 with the job at once; its pages are
    spread over the worker pool. The credits of the selected pages are held now (402 when they
    are not there), billed when it succeeds, released when it fails or is canceled. With
    `options.ocr` "auto" or "force" (and `options.ocr_languages`) the pages without a usable text
    layer, or all, are read by OCR: those are held and billed at the price of a page read by OCR
    (`ocr_pages` on the job; POST /v2/inspect estimates them first)."""

    method_scopes = {"GET": CONVERT, "HEAD": CONVERT, "POST": CONVERT}

    @extend_schema(
        operation_id="jobs_list",
        summary="List jobs",
        parameters=[
            *PAGINATION_PARAMETERS,
            OpenApiParameter(
                "status", OpenApiTypes.STR, enum=[s.value for s in Job.Status], description="Only jobs in this status."
            ),
        ],
        responses={200: JobListSerializer},
    )
    def get(self, request: Request) -> Response:
        query = query_of(request, JobsQuery)
        caller = caller_of(request)
        rows, has_more = job_list(
            organization=caller.organization,
            environment=caller.environment,
            limit=query["limit"],
            starting_after=query.get("starting_after"),
            status=query.get("status"),
        )
        return Response(JobListSerializer(ListPage(rows, has_more)).data)

    @extend_schema(
        operation_id="jobs_create",
        summary="Create a job",
        parameters=[IDEMPOTENCY_PARAMETER],
        request=_job_request_schema(),
        responses={202: JobSerializer},
    )
    def post(self, request: Request) -> Any:
        return super().post(request)


class JobsRawApi(JobCreateMixin):
    """Create a job from a raw PDF body (options in the query string, password, metadata and
    webhook metadata in headers). The same job as POST /v2/jobs."""

    parser_classes = RAW_PARSERS

    @extend_schema(
        operation_id="jobs_raw_create",
        summary="Create a job from a raw PDF body",
        description=RAW_DESCRIPTION,
        parameters=[
            IDEMPOTENCY_PARAMETER,
            *SCAN_RAW_PDF_PARAMETERS,
            OpenApiParameter(
                "X-Svcx-Webhook-Metadata",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="A JSON object (at most 4 KiB) echoed in the job and its webhook events.",
            ),
        ],
        request={OCTET_STREAM: OpenApiTypes.BINARY},
        responses={202: JobSerializer},
    )
    def post(self, request: Request) -> Any:
        return super().post(request)


def _caller_job(request: Request, job_id: str) -> tuple[Caller, Job]:
    caller = caller_of(request)
    return caller, job_get(caller=caller, job_id=job_id)


class JobDetailApi(ApiView):
    """One job of the key's organization and environment (404 `job_not_found` otherwise)."""

    required_scope = CONVERT
    error_codes = (ErrorCode.JOB_NOT_FOUND,)

    @extend_schema(operation_id="jobs_retrieve", summary="Read a job", responses={200: JobSerializer})
    def get(self, request: Request, job_id: str) -> Response:
        query_of(request, NoQuery)
        return Response(JobSerializer(_caller_job(request, job_id)[1]).data)


class JobCancelApi(ApiView):
    """Cancel a queued or running job: it bills nothing and keeps no result. Canceling a
    canceled job answers it again; a job that succeeded or failed is 409 `job_not_cancelable`."""

    required_scope = CONVERT
    error_codes = (ErrorCode.JOB_NOT_FOUND, ErrorCode.JOB_NOT_CANCELABLE)

    @extend_schema(operation_id="jobs_cancel", summary="Cancel a job", request=None, responses={200: JobSerializer})
    def post(self, request: Request, job_id: str) -> Response:
        query_of(request, NoQuery)
        _, job = _caller_job(request, job_id)
        job = async_job_cancel(job=job)
        if job.status != Job.Status.CANCELED:
            raise ServiceError(
                ErrorCode.JOB_NOT_CANCELABLE,
                f"The job has {job.status}; only a queued or running job can be canceled.",
                details={"status": job.status},
            )
        return Response(JobSerializer(job).data)


class NdjsonRenderer(BaseRenderer):
    media_type = NDJSON
    format = "ndjson"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return json.dumps(data, ensure_ascii=False).encode() + b"\n"


class ResultQuery(NoQuery):
    after = StringField(required=False)


class JobResultApi(ApiView):
    """The job's result, as POST /v1/convert answers it: JSON (`Accept: application/json`, the
    default), Markdown (`Accept: text/markdown`), or the pages one JSON object a line as they
    are converted (`Accept: application/x-ndjson`; the stream ends when the job ends, or after
    SVCX_JOB_STREAM_SECONDS: read again with `after` = the pages already read). While the job
    runs, the pages converted so far (`status` says so); a failed job is 409 `job_failed` with its
    error in `details.error`, a canceled one 409 `job_canceled`."""

    required_scope = CONVERT
    error_codes = (ErrorCode.JOB_NOT_FOUND, ErrorCode.JOB_FAILED, ErrorCode.JOB_CANCELED, ErrorCode.UNSUPPORTED_ACCEPT)
    renderer_classes = (JSONRenderer, MarkdownRenderer, NdjsonRenderer)
    content_negotiation_class = AcceptNegotiation

    @extend_schema(
        operation_id="jobs_result",
        summary="Read a job's result",
        parameters=[
            OpenApiParameter(
                "after",
                {"type": "integer", "minimum": 0},
                description="With application/x-ndjson: skip this many pages (those already read).",
            )
        ],
        responses={
            (200, "application/json"): JobResultSerializer,
            (200, "text/markdown"): OpenApiResponse(
                OpenApiTypes.STR,
                description="With `Accept: text/markdown`: the Markdown, `<!-- page N -->` before each page.",
                examples=[OpenApiExample("markdown", value="<!-- page 1 -->\n\n# Title\n", media_type="text/markdown")],
            ),
            (200, NDJSON): OpenApiResponse(
                OpenApiTypes.STR, description="With `Accept: application/x-ndjson`: one page object a line."
            ),
        },
    )
    def get(self, request: Request, job_id: str) -> Any:
        query = query_of(request, ResultQuery)
        _, job = _caller_job(request, job_id)
        job_result_require(job=job)
        fmt = request.accepted_media_type
        if fmt == NDJSON:
            after = _after(query.get("after"))
            response = StreamingHttpResponse(_stream(job, after), content_type=f"{NDJSON}; charset=utf-8")
            response["X-Svcx-Job-Status"] = job.status
            return response
        result = job_result_get(job=job)
        headers = {"X-Svcx-Job-Status": job.status}
        if fmt == MarkdownRenderer.media_type:
            return Response(
                result.markdown(),
                headers={
                    **headers,
                    "X-Svcx-Pages-Billed": str(job.pages_billed),
                    "X-Svcx-Credits-Billed": str(job.credits_billed),
                    "X-Svcx-Result-Truncated": "true" if result.truncated else "false",
                },
            )
        return Response(result.body(), headers=headers)


def _after(value: str | None) -> int:
    if value is None:
        return 0
    if not value.isdigit():
        raise ServiceError(
            ErrorCode.INVALID_PARAMETER_TYPE, "`after` must be a whole number of pages (0 or more).", param="after"
        )
    return int(value)


def _stream(job: Job, after: int) -> Iterator[bytes]:
    """The job's pages from the `after`-th, one JSON line each, as they come; ends with the job
    or after SVCX_JOB_STREAM_SECONDS."""
    deadline = time.monotonic() + float(settings.SVCX_JOB_STREAM_SECONDS)
    sent = after
    while True:
        for page in job_pages_so_far(job=job, after=sent):
            sent += 1
            yield json.dumps(page, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        if job.status in Job.ENDED or time.monotonic() >= deadline:
            return
        time.sleep(0.5)
        job.refresh_from_db()

"""POST /v1/convert, GET /v1/engines, GET /v1/engines/{id}."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.template.response import SimpleTemplateResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.scopes import CONVERT
from billing.limits import MeterName
from billing.meters import record_peek
from conversion import engine
from conversion.engine.errors import ENGINE_ERROR_CODES, OCR_ERROR_CODES
from conversion.intake import INTAKE_ERRORS, OCTET_STREAM
from conversion.options import (
    CHUNK_TOKENS_MAX,
    CHUNK_TOKENS_MIN,
    CHUNKING_STRATEGIES,
    FALLBACKS,
    FIGURES,
    FLAVORS,
    OCR_MODES,
    TABLES,
    offered_engines,
)
from conversion.renderers import MarkdownRenderer
from conversion.requests import RAW_PARSERS, DocumentApi, DocumentRequest, resolved_source
from conversion.results import pages_markdown
from conversion.serializers import ConversionSerializer, EngineListSerializer, EngineSerializer
from conversion.services import (
    WORK_METERS,
    Submission,
    conversion_cache_lookup,
    conversion_deliver,
    conversion_meters_require,
    conversion_refund,
    figures_scope_require,
    job_execute,
)
from core.api import ApiView
from core.context import Usage, context_of
from core.errors import ErrorCode, ServiceError, caller_text
from core.handlers import error_response, request_id_of, to_service_error
from core.inputs import NoQuery, query_of
from core.negotiation import AcceptNegotiation
from core.serializers import ListPage

logger = logging.getLogger("svcx.conversion")

ENGINE_DESCRIPTION = (
    "Layout analysis with pdfminer.six after structural checks and repair with pikepdf: GitHub-flavoured "
    "Markdown with headings, lists, tables, reading order across columns, and running headers and footers removed."
)

PDFIUM_ENGINE_DESCRIPTION = (
    "The same structure stages fed by PDFium's text (characters with boxes, fonts and colours, rulings and "
    "images from page objects) instead of pdfminer.six's layout analysis: about 2.4 times faster; not the default "
    "until it converts as well."
)
ENGINE_TEXT = "The engine that converts (GET /v1/engines lists them); default: the engine listed as default."

CONVERT_ERRORS: tuple[ErrorCode, ...] = (
    *INTAKE_ERRORS,
    *sorted(ErrorCode(code) for code in ENGINE_ERROR_CODES - OCR_ERROR_CODES),
    ErrorCode.METADATA_TOO_LARGE,
    ErrorCode.UNSUPPORTED_ACCEPT,
    ErrorCode.TOO_MANY_PAGES,
    ErrorCode.UNSUPPORTED_OPTION_VALUE,
    ErrorCode.ENGINE_NOT_FOUND,
    ErrorCode.OCR_NOT_AVAILABLE,
    ErrorCode.DEBUG_NOT_PERMITTED,
    ErrorCode.INSUFFICIENT_CREDITS,
    ErrorCode.ACCOUNT_DELINQUENT,
    ErrorCode.CONVERSION_TIMEOUT,
    ErrorCode.BAD_REQUEST,
    ErrorCode.RATE_LIMIT_PAGES,
    ErrorCode.RATE_LIMIT_NO_VALUE_CONVERSIONS,
    ErrorCode.RATE_LIMIT_UNBILLED_WORK,
    ErrorCode.RATE_LIMIT_NEW_ACCOUNT,
)

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7E]+$"},
    OpenApiParameter.HEADER,
    description="1-255 printable ASCII characters; the first non-retryable response is replayed for 24 hours.",
)

PAGES_FIELD_TEXT = 'Page ranges, 1-based, ascending: "1-3,7,10-"; at most 2,048 characters and 1,000 ranges.'
FIGURES_TEXT = (
    '"crop": each figure\'s picture (PNG) stored as a file of your organization, its `file_id` on the figure '
    'element (`image`) and `![caption](file_id)` in the Markdown; see /docs/elements. Default "none": '
    "`<!-- figure -->`."
)
_RAW_ONLY = "The raw-PDF encoding only (in the other encodings it is a member of `options`)."
RAW_PDF_PARAMETERS = [
    OpenApiParameter("pages", {"type": "string", "maxLength": 2048}, description=f"{PAGES_FIELD_TEXT} {_RAW_ONLY}"),
    OpenApiParameter("ocr", OpenApiTypes.STR, enum=["off"], description=_RAW_ONLY),
    OpenApiParameter("flavor", OpenApiTypes.STR, enum=list(FLAVORS), description=_RAW_ONLY),
    OpenApiParameter("tables", OpenApiTypes.STR, enum=list(TABLES), description=_RAW_ONLY),
    OpenApiParameter("fallback", OpenApiTypes.STR, enum=list(FALLBACKS), description=_RAW_ONLY),
    OpenApiParameter("figures", OpenApiTypes.STR, enum=list(FIGURES), description=f"{FIGURES_TEXT} {_RAW_ONLY}"),
    OpenApiParameter("engine", OpenApiTypes.STR, enum=list(engine.ENGINES), description=f"{ENGINE_TEXT} {_RAW_ONLY}"),
    OpenApiParameter("debug", OpenApiTypes.BOOL, description=_RAW_ONLY),
    OpenApiParameter(
        "X-Svcx-Pdf-Password", OpenApiTypes.STR, OpenApiParameter.HEADER, description="The PDF's password (UTF-8)."
    ),
    OpenApiParameter(
        "X-Svcx-Metadata",
        OpenApiTypes.STR,
        OpenApiParameter.HEADER,
        description="A JSON object (at most 4 KiB, UTF-8) echoed in the result.",
    ),
]

OCR_TEXT = (
    'Pages read from their picture (OCR): "off" (none), "auto" (those without a usable text layer: none, '
    'or unreadable glyphs, or a stamp on a scan), "force" (every selected page). A page read by OCR costs '
    "more credits than a text page; see /docs/jobs#ocr."
)
OCR_LANGUAGES_TEXT = 'ISO 639-1 codes of the languages the pages are written in (default ["en"]); GET /v1/engines '
OCR_LANGUAGES_TEXT += "lists those installed (`ocr_languages`)."
# Version 2's raw-PDF query string: version 1's, `ocr` with OCR's values and `ocr_languages`.
SCAN_RAW_PDF_PARAMETERS = [
    *(p for p in RAW_PDF_PARAMETERS if p.name != "ocr"),
    OpenApiParameter("ocr", OpenApiTypes.STR, enum=list(OCR_MODES), description=f"{OCR_TEXT} {_RAW_ONLY}"),
    OpenApiParameter(
        "ocr_languages",
        OpenApiTypes.STR,
        description=f"{OCR_LANGUAGES_TEXT} Comma-separated: `en,de`. {_RAW_ONLY}",
    ),
]


def _options_serializer(name: str, ocr: dict[str, serializers.Field[Any, Any, Any, Any]]) -> Any:
    return inline_serializer(
        name,
        {
            "pages": serializers.CharField(required=False, max_length=2048, help_text=PAGES_FIELD_TEXT),
            **ocr,
            "flavor": serializers.ChoiceField(FLAVORS, required=False),
            "tables": serializers.ChoiceField(TABLES, required=False),
            "fallback": serializers.ChoiceField(FALLBACKS, required=False),
            "chunking": _CHUNKING,
            "figures": serializers.ChoiceField(FIGURES, required=False, help_text=FIGURES_TEXT),
            "engine": serializers.ChoiceField(list(engine.ENGINES), required=False, help_text=ENGINE_TEXT),
        },
        required=False,
        help_text="Conversion options; see /docs/options.",
    )


_CHUNKING = inline_serializer(
    "ChunkingOption",
    {
        "strategy": serializers.ChoiceField(CHUNKING_STRATEGIES, required=False),
        "max_tokens": serializers.IntegerField(
            required=False, min_value=CHUNK_TOKENS_MIN, max_value=CHUNK_TOKENS_MAX, default=512
        ),
        "overlap_tokens": serializers.IntegerField(
            required=False, min_value=0, default=0, help_text="At most half of max_tokens."
        ),
    },
    required=False,
    help_text="JSON results only: add `chunks`, the document cut for retrieval; see /docs/chunks.",
)
# One component shared by every operation that takes options; version 2's reads scans.
OPTIONS_SERIALIZER = _options_serializer("ConversionOptions", {"ocr": serializers.ChoiceField(["off"], required=False)})
SCAN_OPTIONS_SERIALIZER = _options_serializer(
    "ScanConversionOptions",
    {
        "ocr": serializers.ChoiceField(OCR_MODES, required=False, help_text=OCR_TEXT),
        "ocr_languages": serializers.ListField(
            child=serializers.CharField(), required=False, min_length=1, help_text=OCR_LANGUAGES_TEXT
        ),
    },
)
_METADATA_TEXT = "A JSON object (at most 4 KiB) echoed in the result."


def document_request_schema(
    name: str, extra: dict[str, Any] | None = None, *, options: Any = OPTIONS_SERIALIZER
) -> dict[str, Any]:
    """The multipart and JSON encodings of a request that sends a document (decisions.md 1),
    with the `extra` members of an endpoint's own and its `options` (version 2's read scans).

    The raw PDF (application/pdf) is accepted on the same path but described by the operation
    `<path>/raw`, so that a generated client offers the query options with it alone.
    """
    return {
        "multipart/form-data": inline_serializer(
            f"{name}Multipart",
            {
                "file": serializers.FileField(help_text="The PDF."),
                "options": options,
                "password": serializers.CharField(required=False, help_text="The PDF's password."),
                "metadata": serializers.DictField(required=False, help_text=_METADATA_TEXT),
                "debug": serializers.BooleanField(required=False),
                **(extra or {}),
            },
        ),
        "application/json": inline_serializer(
            f"{name}Json",
            {
                "file_id": serializers.CharField(help_text="A stored file (POST /v1/files)."),
                "options": options,
                "password": serializers.CharField(required=False, help_text="The PDF's password."),
                "metadata": serializers.DictField(required=False, help_text=_METADATA_TEXT),
                "debug": serializers.BooleanField(required=False),
                **(extra or {}),
            },
        ),
    }


RAW_REQUEST_SCHEMA = {OCTET_STREAM: OpenApiTypes.BINARY}
RAW_DESCRIPTION = (
    "The body is the PDF itself, sent as application/octet-stream or application/pdf (the same as "
    "an application/pdf body on the path without `/raw`); options are query parameters, the "
    "password is the header X-Svcx-Pdf-Password and metadata the header X-Svcx-Metadata. "
    "On /v1/convert/raw, `Accept: text/markdown` answers with the Markdown alone."
)


def _render(
    *,
    payload: dict[str, Any],
    fmt: str,
    request_id: str,
    pages_billed: int,
    credits_billed: int,
    cached: bool,
    parsed: DocumentRequest,
) -> Any:
    pages = payload["pages"]
    if fmt == MarkdownRenderer.media_type:
        text = pages_markdown(pages)
        headers = {
            "X-Svcx-Pages-Billed": str(pages_billed),
            "X-Svcx-Credits-Billed": str(credits_billed),
            "X-Svcx-Result-Truncated": "true" if payload["result_truncated"] else "false",
            "X-Svcx-Cached": "true" if cached else "false",
        }
        return Response(text, headers=headers)
    debug = (
        {"timings": payload.get("timings", {}), "document": payload["document"], "engine": payload["engine"]}
        if parsed.debug
        else None
    )
    answer = {
        **payload,
        "request_id": request_id,
        "pages_billed": pages_billed,
        "credits_billed": credits_billed,
        "cached": cached,
        "metadata": parsed.metadata,
        "debug": debug,
    }
    return Response(ConversionSerializer(answer).data)


def post_schema(**description: Any) -> Any:
    """The OpenAPI description of a view's POST, set on the class (`post` is the pipeline's
    of conversion.requests.DocumentApi)."""
    return extend_schema_view(post=extend_schema(**description))


def document_schema(
    summary: str,
    responses: Any,
    *,
    name: str = "",
    parameters: Sequence[OpenApiParameter] = (),
    scans: bool = False,
) -> Any:
    """The POST of a document endpoint: the multipart and JSON encodings (`name` their
    components), or without `name` the raw PDF of its `/raw` operation; with `scans`, version
    2's options (OCR)."""
    if name:
        return post_schema(
            summary=summary,
            parameters=[IDEMPOTENCY_PARAMETER, *parameters],
            request=document_request_schema(name, options=SCAN_OPTIONS_SERIALIZER if scans else OPTIONS_SERIALIZER),
            responses=responses,
        )
    return post_schema(
        summary=summary,
        description=RAW_DESCRIPTION,
        parameters=[IDEMPOTENCY_PARAMETER, *parameters, *(SCAN_RAW_PDF_PARAMETERS if scans else RAW_PDF_PARAMETERS)],
        request=RAW_REQUEST_SCHEMA,
        responses=responses,
    )


# The answer is negotiated by the Accept header, which OpenAPI describes by the response's media
# types, never as a parameter (OpenAPI 3.0, Parameter Object: a header parameter named Accept
# "SHALL be ignored"). Described as one, it led generated clients to offer text/markdown and then
# parse the Markdown as JSON: the request was billed and the client crashed. Generators now see
# one JSON answer to parse; the operation's description says how to ask for Markdown.
CONVERT_RESPONSES: dict[Any, Any] = {
    (200, "application/json"): ConversionSerializer,
    (200, "text/markdown"): OpenApiResponse(
        OpenApiTypes.STR,
        description="With `Accept: text/markdown` only: the Markdown, `<!-- page N -->` before each page; billing "
        "in `X-Svcx-*` headers. Without it (or with `Accept: application/json`, or `*/*`) the answer is JSON.",
        examples=[OpenApiExample("markdown", value="<!-- page 1 -->\n\n# Title\n", media_type="text/markdown")],
    ),
}


@document_schema("Convert a PDF", CONVERT_RESPONSES, name="Convert")
class ConvertApi(DocumentApi):
    """Convert a PDF to Markdown or JSON.

    The body is one of: multipart/form-data with a `file` part (and optional text parts `options`,
    `password`, `metadata`, `debug`); application/json with `file_id` of a stored file; or the raw
    PDF as application/pdf with options in the query string (`pages`, `ocr`, `flavor`, `tables`,
    `fallback`, `figures`, `debug`), the password in `X-Svcx-Pdf-Password` and metadata in `X-Svcx-Metadata`.
    `Accept: text/markdown` answers with the Markdown and `X-Svcx-*` billing headers. One page costs
    one credit; every 4xx and 5xx bills nothing; a cached result bills nothing.
    """

    required_scope = CONVERT
    spends_credits = True
    error_codes = CONVERT_ERRORS
    renderer_classes = (JSONRenderer, MarkdownRenderer)
    content_negotiation_class = AcceptNegotiation

    def perform(self, document: DocumentRequest) -> Any:
        caller, raw = document.caller, document.raw
        figures_scope_require(caller=caller, options=document.options)
        fmt = self.request.accepted_media_type
        request_id = request_id_of(raw)
        source = resolved_source(document)
        cache = conversion_cache_lookup(
            caller=caller, source=source, options=document.options, password=document.password
        )
        if cache.result is not None:
            context_of(raw).usage = Usage()
            return _render(
                payload=cache.result.payload,
                fmt=fmt,
                request_id=request_id,
                pages_billed=0,
                credits_billed=0,
                cached=True,
                parsed=document,
            )
        # Refused at once when a meter of work is used up, and again when the job's turn comes.
        conversion_meters_require(caller=caller)
        try:
            job = job_execute(
                caller=caller,
                request_id=request_id,
                is_client_gone=document.client_gone,
                meters=WORK_METERS,
                submission=Submission(
                    source=source,
                    password=document.password,
                    options=document.options,
                    cache_key=cache.key,
                    debug=document.debug,
                ),
            )
        finally:
            record_peek(raw, caller, MeterName.PAGES)
        # The capture, just before the 200 leaves; an error answer after it is refunded (dispatch).
        delivery = conversion_deliver(job=job, is_client_gone=document.client_gone)
        billed = delivery.billed
        context_of(raw).usage = Usage(pages=billed.pages, credits=billed.credits, captured=billed.captured)
        return _render(
            payload=delivery.payload,
            fmt=fmt,
            request_id=request_id,
            pages_billed=billed.pages,
            credits_billed=billed.credits,
            cached=False,
            parsed=document,
        )

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        """The view, with its answer rendered here: an answer that became an error after the
        credits were captured (it failed to render, or to be stored under its Idempotency-Key)
        is refunded before the request is recorded. A failure past this point (the process
        died) is refunded by billing's reconcile sweeper: no 200 was logged for the capture."""
        try:
            response = super().dispatch(request, *args, **kwargs)
            if isinstance(response, SimpleTemplateResponse):
                response.render()
        except Exception as exc:
            # Answered as ErrorEnvelopeMiddleware would answer it, once it is known what it is.
            error = to_service_error(exc, request)
            _refund_if_captured(request, status=error.spec.status, code=error.code)
            return error_response(error, request)
        _refund_if_captured(request, status=response.status_code, code=getattr(response, "svcx_error_code", ""))
        return response


def _refund_if_captured(raw: HttpRequest, *, status: int, code: str) -> None:
    """Refund the request's capture when its answer is an error after all. Never raises: the
    answer is decided; a refund that cannot be written now is made by the reconcile sweeper."""
    usage = context_of(raw).usage
    if usage is None or not usage.captured or status < 400:
        return
    try:
        conversion_refund(request_id=request_id_of(raw), reason=f"answered {status} {code} after the capture")
    except Exception:
        logger.exception("refund of a failed answer not written", extra={"request_id": request_id_of(raw)})


@document_schema("Convert a raw PDF body", CONVERT_RESPONSES)
class ConvertRawApi(ConvertApi):
    """Convert a PDF sent as the raw body. The same conversion as POST /v1/convert."""

    parser_classes = RAW_PARSERS


@dataclass(frozen=True)
class Engine:
    """A conversion engine as GET /v1/engines lists it (EngineSerializer)."""

    id: str
    version: str
    default: bool
    description: str
    ocr: bool
    tables: tuple[str, ...]
    flavors: tuple[str, ...]
    ocr_languages: tuple[str, ...]


# Read once: the traineddata installed with the service (Debian's tesseract-ocr-*).
_OCR_LANGUAGES = tuple(engine.installed_languages())
# The engines of engine.ENGINES, the default first.
ENGINES = tuple(
    Engine(
        id=engine_id,
        version=version,
        default=engine_id == engine.ENGINE_ID,
        description=ENGINE_DESCRIPTION if engine_id == engine.ENGINE_ID else PDFIUM_ENGINE_DESCRIPTION,
        ocr=False,
        tables=TABLES,
        flavors=FLAVORS,
        ocr_languages=_OCR_LANGUAGES,
    )
    for engine_id, version in engine.ENGINES.items()
)


class EnginesApi(ApiView):
    """The conversion engines. Any valid key may read them."""

    @extend_schema(
        operation_id="engines_list",
        summary="List engines",
        responses={200: EngineListSerializer},
    )
    def get(self, request: Request) -> Response:
        query_of(request, NoQuery)
        offered = offered_engines()
        listed = [e for e in ENGINES if e.id in offered]
        return Response(EngineListSerializer(ListPage(listed, has_more=False)).data)


class EngineDetailApi(ApiView):
    """One engine by identifier; an unknown identifier is 404 `engine_not_found`."""

    error_codes = (ErrorCode.ENGINE_NOT_FOUND,)

    @extend_schema(summary="Read an engine", responses={200: EngineSerializer})
    def get(self, request: Request, engine_id: str) -> Response:
        query_of(request, NoQuery)
        found = next((e for e in ENGINES if e.id == engine_id and e.id in offered_engines()), None)
        if found is None:
            raise ServiceError(
                ErrorCode.ENGINE_NOT_FOUND,
                f"No engine {caller_text(engine_id)!r}; GET /v1/engines lists them.",
                param="engine_id",
            )
        return Response(EngineSerializer(found).data)

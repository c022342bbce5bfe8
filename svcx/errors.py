"""The catalogue of every error code svcx returns, and the exception that carries one.

A code is added here and nowhere else: the envelope renderer, the /docs/errors/<code> pages,
the OpenAPI description and the tests all read `CATALOGUE`. Raise sites name a code and, where
useful, a specific message, `param` and `details`; status, type and retryability always come
from the catalogue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings

INVALID_REQUEST = "invalid_request_error"
AUTHENTICATION = "authentication_error"
PERMISSION = "permission_error"
NOT_FOUND = "not_found_error"
PAYMENT_REQUIRED = "payment_required_error"
RATE_LIMIT = "rate_limit_error"
DOCUMENT = "document_error"
TIMEOUT = "timeout_error"
OVERLOADED = "overloaded_error"
API = "api_error"

ERROR_TYPES = (
    INVALID_REQUEST,
    AUTHENTICATION,
    PERMISSION,
    NOT_FOUND,
    PAYMENT_REQUIRED,
    RATE_LIMIT,
    DOCUMENT,
    TIMEOUT,
    OVERLOADED,
    API,
)

# interface.md 7.2: which HTTP statuses each type may carry.
STATUSES_OF_TYPE: dict[str, frozenset[int]] = {
    INVALID_REQUEST: frozenset({400, 405, 406, 409, 413, 415, 422}),
    AUTHENTICATION: frozenset({401}),
    PERMISSION: frozenset({403}),
    NOT_FOUND: frozenset({404, 410}),
    PAYMENT_REQUIRED: frozenset({402}),
    RATE_LIMIT: frozenset({429}),
    DOCUMENT: frozenset({422}),
    TIMEOUT: frozenset({408, 504}),
    OVERLOADED: frozenset({503}),
    API: frozenset({500}),
}


@dataclass(frozen=True)
class ErrorSpec:
    code: str
    status: int
    type: str
    retryable: bool
    message: str
    help: str


def _spec(code: str, status: int, type_: str, message: str, help_: str, *, retryable: bool = False) -> ErrorSpec:
    return ErrorSpec(code=code, status=status, type=type_, retryable=retryable, message=message, help=help_)


_RATE_HELP = (
    "Wait for the number of seconds in the Retry-After header (retry_after_ms in the body) and "
    "send the request again. The x-ratelimit-* headers on every response tell how much of each "
    "meter is left, so a client can pace itself before it is refused. `details` names the meter, its "
    "limit and window, what this request needed (`requested`) and whether that alone is over the "
    "whole limit (`exceeds_limit`: then no wait helps; send smaller requests). Limits are per "
    "organization and environment; ask support to raise yours."
)

_SPECS: tuple[ErrorSpec, ...] = (
    # Request shape
    _spec(
        "malformed_json",
        400,
        INVALID_REQUEST,
        "The request body is not valid JSON.",
        "The body was sent as application/json but does not parse. Send one JSON object, encoded as UTF-8.",
    ),
    _spec(
        "multipart_malformed",
        400,
        INVALID_REQUEST,
        "The multipart/form-data body does not parse.",
        "Check that the Content-Type header carries the boundary the body uses and that every part is terminated. "
        "HTTP libraries build this for you when given a file.",
    ),
    _spec(
        "missing_source",
        400,
        INVALID_REQUEST,
        "No PDF was supplied.",
        "Send the PDF as a multipart part named `file`, as the raw body with Content-Type application/pdf, "
        "or name a stored file with `file_id` in a JSON body.",
    ),
    _spec(
        "multiple_sources",
        400,
        INVALID_REQUEST,
        "More than one source was supplied.",
        "A request takes exactly one source: a multipart `file` part, a raw application/pdf body, or a `file_id`. "
        "Remove all but one.",
    ),
    _spec(
        "unsupported_source_type",
        400,
        INVALID_REQUEST,
        "This source type is not supported.",
        "base64 sources are refused permanently and url sources are not available in v1. Upload the bytes "
        "(multipart `file` or application/pdf), or upload once with POST /v1/files and pass `file_id`.",
    ),
    _spec(
        "unknown_parameter",
        400,
        INVALID_REQUEST,
        "The request has a parameter the API does not know.",
        "`param` names the exact path of the unrecognised field. Remove it or correct its spelling; the OpenAPI "
        "description at /v1/openapi.json lists every accepted field.",
    ),
    _spec(
        "invalid_parameter_type",
        400,
        INVALID_REQUEST,
        "A parameter has the wrong type.",
        "`param` names the field. Send it with the type the API documents (for example `options.pages` is a string "
        'such as "1-3,7", never an array).',
    ),
    _spec(
        "query_options_not_allowed",
        400,
        INVALID_REQUEST,
        "Query parameters are not allowed with this body encoding.",
        "Query parameters carry options only when the body is a raw application/pdf. With a multipart or JSON body, "
        "put the options in the `options` object of the body instead.",
    ),
    _spec(
        "metadata_too_large",
        413,
        INVALID_REQUEST,
        "The client metadata is larger than allowed.",
        "`metadata` is limited to 4 KiB of JSON. Send a smaller object, for example an identifier of your own record.",
    ),
    _spec(
        "bad_request",
        400,
        INVALID_REQUEST,
        "The request could not be understood.",
        "The HTTP request itself is malformed (for example a broken header). Check the client that sent it.",
    ),
    # Authentication
    _spec(
        "missing_api_key",
        401,
        AUTHENTICATION,
        "No API key was supplied.",
        "Send the key in the header `Authorization: Bearer <API_KEY>`. A key in a query parameter or in any other "
        "header is not read, and such a request is refused the same way.",
    ),
    _spec(
        "invalid_api_key",
        401,
        AUTHENTICATION,
        "The API key is not valid.",
        "The key is unknown, malformed or fails its checksum. Copy the whole 63-character key again; keys are shown "
        "only once, when created. Console session tokens (svcx_cs_...) are not API keys.",
    ),
    _spec(
        "revoked_api_key",
        401,
        AUTHENTICATION,
        "The API key has been revoked.",
        "Revocation is permanent. Use another key of the organization or have an administrator create a new one.",
    ),
    _spec(
        "expired_api_key",
        401,
        AUTHENTICATION,
        "The API key has expired.",
        "The key passed its expiry time, usually after a rotation. The message names the hint of the replacement "
        "key; switch to it.",
    ),
    # Payment
    _spec(
        "insufficient_credits",
        402,
        PAYMENT_REQUIRED,
        "The organization does not have enough credits for this request.",
        "`details` gives `credits_required`, `credits_available` and `top_up_url`. Top up, or select fewer pages with "
        "`options.pages`. Nothing was billed. With a test key this means the monthly test allowance is used up.",
    ),
    _spec(
        "account_delinquent",
        402,
        PAYMENT_REQUIRED,
        "Spending is frozen because of an open dispute or chargeback.",
        "`details` has `debt_credits` and `credits_required_to_resume`. Contact billing support to settle the dispute; "
        "reading endpoints keep working meanwhile.",
    ),
    # Permission
    _spec(
        "insufficient_scope",
        403,
        PERMISSION,
        "The API key lacks the scope this endpoint requires.",
        "Each endpoint requires one scope (convert, files:write, files:read, inspect, account:read); `details` names "
        "the one needed. Use a key that has it, or have an administrator create one.",
    ),
    _spec(
        "ip_not_allowed",
        403,
        PERMISSION,
        "The request comes from an address outside the key's IP allowlist.",
        "Call from an allowed address, or have an administrator add yours to the key's allowlist (changes take "
        "effect within 10 seconds).",
    ),
    _spec(
        "account_suspended",
        403,
        PERMISSION,
        "The organization is suspended.",
        "Every request of a suspended organization is refused. Contact support.",
    ),
    _spec(
        "pdf_extraction_not_permitted",
        403,
        PERMISSION,
        "The document's permissions forbid text extraction.",
        "The PDF's author set permission bits that forbid extracting its text. Ask the author for a copy without that "
        "restriction. Nothing was billed.",
    ),
    _spec(
        "debug_not_permitted",
        403,
        PERMISSION,
        "Debug output is disabled for this organization.",
        "`debug: true` is refused while the organization's debug policy is disabled (the default for organizations "
        "with a signed data-processing agreement). Send the request without `debug`.",
    ),
    # Not found
    _spec(
        "file_not_found",
        404,
        NOT_FOUND,
        "No such file.",
        "The file does not exist, was deleted, or belongs to another organization or environment (live and test "
        "keys see different files). Check the `file_id`.",
    ),
    _spec(
        "engine_not_found",
        404,
        NOT_FOUND,
        "No such engine.",
        "GET /v1/engines lists the engine identifiers that exist.",
    ),
    _spec(
        "unknown_endpoint",
        404,
        NOT_FOUND,
        "No such endpoint.",
        "Every route lives under /v1; the OpenAPI description at /v1/openapi.json lists them all.",
    ),
    _spec(
        "file_expired",
        410,
        NOT_FOUND,
        "The stored file has passed its retention window.",
        "Stored files are kept for 7 days. Upload the file again with POST /v1/files.",
    ),
    _spec(
        "result_expired",
        410,
        NOT_FOUND,
        "The cached result has passed its 24-hour window.",
        "Results are kept for 24 hours. Send the conversion again with a new idempotency key.",
    ),
    # Method, negotiation, conflict
    _spec(
        "method_not_allowed",
        405,
        INVALID_REQUEST,
        "This endpoint does not accept that HTTP method.",
        "The `Allow` header lists the methods the endpoint accepts. Cross-origin preflight (OPTIONS) is refused on "
        "every authenticated endpoint: call the API from a server, not a browser.",
    ),
    _spec(
        "unsupported_accept",
        406,
        INVALID_REQUEST,
        "The Accept header names no type this endpoint can produce.",
        "Send `Accept: application/json` or `Accept: text/markdown` (or leave it out for JSON).",
    ),
    _spec(
        "idempotency_conflict",
        409,
        INVALID_REQUEST,
        "This idempotency key was used for a different request.",
        "An Idempotency-Key identifies one request (method, path, query, body and Accept). Use a new key for a new "
        "request.",
    ),
    _spec(
        "idempotency_in_progress",
        409,
        INVALID_REQUEST,
        "A request with this idempotency key is still running.",
        "Wait for the Retry-After interval (1 second) and send the same request again: it will be answered with the "
        "stored result once the first attempt finishes.",
        retryable=True,
    ),
    _spec(
        "unsupported_content_type",
        415,
        INVALID_REQUEST,
        "The Content-Type is not one this endpoint accepts.",
        "Send multipart/form-data (a `file` part), application/json (with `file_id`) or application/pdf (the raw PDF).",
    ),
    # Size and quota
    _spec(
        "file_too_large",
        413,
        INVALID_REQUEST,
        "The upload is larger than allowed.",
        "Uploads are limited to 32 MiB on /v1/convert and 128 MiB on /v1/files. Upload a large file once with "
        "POST /v1/files and convert it by `file_id`, or split the document.",
    ),
    _spec(
        "too_many_pages",
        400,
        INVALID_REQUEST,
        "The page selection exceeds the per-request ceiling.",
        "A request may select at most 200 pages on /v1/convert (5 with a test key), counted after clipping to the "
        "document. Use `options.pages` to convert the document in parts.",
    ),
    _spec(
        "storage_quota_exceeded",
        413,
        INVALID_REQUEST,
        "The organization's file storage is full.",
        "`details` gives the quota, the bytes used and the bytes needed. Delete files you no longer need with "
        "DELETE /v1/files/{id}; files also expire after 7 days.",
    ),
    _spec(
        "pdf_too_complex",
        422,
        INVALID_REQUEST,
        "The document's structure exceeds what the service parses.",
        "The file has more objects, deeper nesting or larger streams than the service accepts. Re-save or split it "
        "with a PDF tool and try again.",
    ),
    # Parameter values
    _spec(
        "page_range_invalid",
        400,
        INVALID_REQUEST,
        "The page-range expression does not parse.",
        "`pages` is a comma-separated list of ascending, non-overlapping ranges: `N`, `N-M` or `N-` (to the end), "
        '1-based, for example "1-3,7,10-".',
    ),
    _spec(
        "page_range_zero",
        400,
        INVALID_REQUEST,
        "Page 0 does not exist: pages are numbered from 1.",
        "Number pages from 1.",
    ),
    _spec(
        "page_range_reversed",
        400,
        INVALID_REQUEST,
        "A page range runs backwards.",
        "Write ranges low to high: `3-7`, not `7-3`.",
    ),
    _spec(
        "page_range_out_of_bounds",
        422,
        INVALID_REQUEST,
        "The page selection lies entirely past the end of the document.",
        "`details.page_count` gives the document's page count. Select pages within it. Nothing was billed.",
    ),
    _spec(
        "page_range_too_complex",
        400,
        INVALID_REQUEST,
        "The page-range expression is too long.",
        "An expression may be at most 2,048 characters and 1,000 ranges. Merge adjacent pages into ranges.",
    ),
    _spec(
        "unsupported_option_value",
        400,
        INVALID_REQUEST,
        "The option value is not available in v1.",
        "`param` names the option. Accepted values: flavor `gfm`; tables `markdown`, `html`, `text`; "
        "fallback `empty`, `error`.",
    ),
    _spec(
        "option_conflict",
        400,
        INVALID_REQUEST,
        "Two options cannot both be honoured.",
        "The message names both options. Drop one of them.",
    ),
    _spec(
        "ocr_not_available",
        400,
        INVALID_REQUEST,
        "OCR is not available in v1.",
        "Set `options.ocr` to `off` or leave it out. Pages without a text layer follow `options.fallback`.",
    ),
    _spec(
        "feature_not_enabled",
        400,
        INVALID_REQUEST,
        "This feature is not enabled for the organization.",
        "Contact support to have it enabled.",
    ),
    # Document
    _spec(
        "pdf_invalid",
        422,
        DOCUMENT,
        "The file is not a PDF.",
        "The bytes do not start a PDF document. Check that you sent the file itself, not an HTML page, an archive "
        "or an error message saved under a .pdf name.",
    ),
    _spec(
        "pdf_corrupt",
        422,
        DOCUMENT,
        "The PDF is damaged beyond recovery.",
        "The file's structure is broken and could not be repaired. Re-export it from its source application.",
    ),
    _spec(
        "pdf_read_error",
        422,
        DOCUMENT,
        "The PDF could not be read to completion.",
        "The file appears cut short. Upload it again and check its size against the original.",
    ),
    _spec(
        "pdf_parse_failed",
        422,
        DOCUMENT,
        "Parsing failed on a structure of the PDF.",
        "The document uses a construct the parser could not read. Re-saving it with another PDF tool often helps.",
    ),
    _spec(
        "pdf_encrypted",
        422,
        DOCUMENT,
        "The PDF is encrypted and needs a password.",
        "Send the document's password (multipart part or JSON member `password`, or header X-Svcx-Pdf-Password "
        "with an application/pdf body).",
    ),
    _spec(
        "pdf_password_incorrect",
        422,
        DOCUMENT,
        "The password does not open the PDF.",
        "Check the password; it is case-sensitive.",
    ),
    _spec(
        "pdf_unsupported_security",
        422,
        DOCUMENT,
        "The PDF uses an unsupported security handler.",
        "The file is protected by a scheme other than password encryption (for example certificates). Remove the "
        "protection in the application that set it.",
    ),
    _spec(
        "pdf_no_pages",
        422,
        DOCUMENT,
        "The PDF has no pages.",
        "The document's page tree is empty; there is nothing to convert.",
    ),
    _spec(
        "pdf_is_xfa",
        422,
        DOCUMENT,
        "The PDF is a dynamic XFA form.",
        "Dynamic XFA forms carry their content as XML rendered by the viewer, not as PDF pages. Print or flatten the "
        "form to a PDF and convert that.",
    ),
    _spec(
        "document_has_no_text_layer",
        422,
        DOCUMENT,
        "No selected page has extractable text.",
        "The pages are images (for example scans) and OCR is not available in v1. Run OCR before uploading. "
        "Nothing was billed.",
    ),
    _spec(
        "page_has_no_text_layer",
        422,
        DOCUMENT,
        "A selected page has no extractable text.",
        "You asked for `options.fallback: error`. `details.page` names the page. Exclude it with `options.pages` or "
        "use `fallback: empty`.",
    ),
    _spec(
        "document_too_complex",
        422,
        DOCUMENT,
        "The document exhausted the conversion work budget.",
        "A page holds more drawing objects than the service processes. Convert other pages with `options.pages`.",
    ),
    # Rate limits
    _spec("rate_limit_requests", 429, RATE_LIMIT, "Too many requests per minute.", _RATE_HELP, retryable=True),
    _spec("rate_limit_pages", 429, RATE_LIMIT, "Too many pages per minute.", _RATE_HELP, retryable=True),
    _spec(
        "rate_limit_concurrency",
        429,
        RATE_LIMIT,
        "Too many requests in flight for this organization.",
        "Your organization has more requests running at once than its concurrency limit. Wait for one to finish, "
        "then retry after Retry-After. This is your own limit; 503 `overloaded` instead means the whole service is "
        "busy.",
        retryable=True,
    ),
    _spec("rate_limit_uploads", 429, RATE_LIMIT, "Too many upload bytes per minute.", _RATE_HELP, retryable=True),
    _spec(
        "rate_limit_inspect",
        429,
        RATE_LIMIT,
        "Too many inspect requests, or the daily inspect sample budget is used.",
        _RATE_HELP,
        retryable=True,
    ),
    _spec(
        "rate_limit_toc", 429, RATE_LIMIT, "Too many table-of-contents requests per minute.", _RATE_HELP, retryable=True
    ),
    _spec(
        "rate_limit_no_value_conversions",
        429,
        RATE_LIMIT,
        "Too many conversions this hour produced no text.",
        _RATE_HELP,
        retryable=True,
    ),
    _spec(
        "rate_limit_unbilled_work", 429, RATE_LIMIT, "Too much unbilled compute this hour.", _RATE_HELP, retryable=True
    ),
    _spec(
        "rate_limit_new_account",
        429,
        RATE_LIMIT,
        "New organizations have a daily page cap for their first 7 days.",
        _RATE_HELP,
        retryable=True,
    ),
    # Timeout
    _spec(
        "request_timeout",
        408,
        TIMEOUT,
        "The upload did not complete within 20 seconds.",
        "The whole body must arrive within 20 seconds of its first byte. On a slow link, upload once with "
        "POST /v1/files and convert by `file_id`.",
    ),
    _spec(
        "conversion_timeout",
        504,
        TIMEOUT,
        "The conversion exceeded its wall-clock limit.",
        "`details.pages_completed` says how far it got. Convert fewer pages per request with `options.pages`. "
        "Nothing was billed.",
    ),
    # Server
    _spec(
        "internal_error",
        500,
        API,
        "An internal error occurred.",
        "Retry the request; include the request_id if you contact support. Nothing was billed.",
        retryable=True,
    ),
    _spec(
        "overloaded",
        503,
        OVERLOADED,
        "The service is at capacity.",
        "The fleet is saturated. Back off for the Retry-After interval and retry. This is not your organization's "
        "limit; that is 429 `rate_limit_concurrency`.",
        retryable=True,
    ),
    _spec(
        "service_unavailable",
        503,
        OVERLOADED,
        "A component the service depends on is down.",
        "`details.checks` names what is down. Retry after the Retry-After interval.",
        retryable=True,
    ),
)

CATALOGUE: dict[str, ErrorSpec] = {spec.code: spec for spec in _SPECS}


class ServiceError(Exception):
    """An error with a catalogue code, rendered as the envelope by the one exception handler."""

    def __init__(
        self,
        code: str,
        message: str | None = None,
        *,
        param: str | None = None,
        details: dict[str, Any] | None = None,
        retry_after_ms: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if code not in CATALOGUE:
            raise KeyError(f"error code {code!r} is not in the catalogue")
        self.spec = CATALOGUE[code]
        self.code = code
        self.message = message or self.spec.message
        self.param = param
        self.details = details or {}
        self.retry_after_ms = retry_after_ms
        self.headers = headers or {}
        super().__init__(f"{code}: {self.message}")


CALLER_TEXT_LIMIT = 128
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def control_stripped(value: object) -> str:
    """`value` as text without control characters (PostgreSQL refuses NUL in text outright)."""
    return _CONTROL.sub("", str(value))


def caller_text(value: object) -> str:
    """A caller-supplied string made safe to quote in a message: control characters stripped,
    unpaired surrogates (from JSON escapes) replaced, at most 128 characters."""
    text = control_stripped(value)[:CALLER_TEXT_LIMIT]
    return text.encode("utf-8", "replace").decode("utf-8")


def doc_url(code: str) -> str:
    return f"{settings.SVCX_DOCS_URL}/errors/{code}"

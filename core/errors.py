"""The catalogue of every error code svcx returns, and the exception that carries one.

A code is added here and nowhere else: the envelope renderer, the /docs/errors/<code> pages,
the OpenAPI description and the tests all read `CATALOGUE`. Raise sites name a code and, where
useful, a specific message, `param` and `details`; status, type and retryability always come
from the catalogue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

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


class ErrorCode(StrEnum):
    """Every code the service answers with: the catalogue's keys and the `code` of the envelope."""

    MALFORMED_JSON = "malformed_json"
    MULTIPART_MALFORMED = "multipart_malformed"
    MISSING_SOURCE = "missing_source"
    MULTIPLE_SOURCES = "multiple_sources"
    UNSUPPORTED_SOURCE_TYPE = "unsupported_source_type"
    UNKNOWN_PARAMETER = "unknown_parameter"
    INVALID_PARAMETER_TYPE = "invalid_parameter_type"
    QUERY_OPTIONS_NOT_ALLOWED = "query_options_not_allowed"
    METADATA_TOO_LARGE = "metadata_too_large"
    BAD_REQUEST = "bad_request"
    URI_TOO_LONG = "uri_too_long"
    MISSING_API_KEY = "missing_api_key"
    INVALID_API_KEY = "invalid_api_key"
    REVOKED_API_KEY = "revoked_api_key"
    EXPIRED_API_KEY = "expired_api_key"
    INSUFFICIENT_CREDITS = "insufficient_credits"
    ACCOUNT_DELINQUENT = "account_delinquent"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    IP_NOT_ALLOWED = "ip_not_allowed"
    ACCOUNT_SUSPENDED = "account_suspended"
    PDF_EXTRACTION_NOT_PERMITTED = "pdf_extraction_not_permitted"
    DEBUG_NOT_PERMITTED = "debug_not_permitted"
    FILE_NOT_FOUND = "file_not_found"
    ENGINE_NOT_FOUND = "engine_not_found"
    UNKNOWN_ENDPOINT = "unknown_endpoint"
    FILE_EXPIRED = "file_expired"
    RESULT_EXPIRED = "result_expired"
    JOB_NOT_FOUND = "job_not_found"
    JOB_FAILED = "job_failed"
    JOB_CANCELED = "job_canceled"
    JOB_NOT_CANCELABLE = "job_not_cancelable"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    UNSUPPORTED_ACCEPT = "unsupported_accept"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    IDEMPOTENCY_IN_PROGRESS = "idempotency_in_progress"
    UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
    FILE_TOO_LARGE = "file_too_large"
    TOO_MANY_PAGES = "too_many_pages"
    STORAGE_QUOTA_EXCEEDED = "storage_quota_exceeded"
    PDF_TOO_COMPLEX = "pdf_too_complex"
    PAGE_RANGE_INVALID = "page_range_invalid"
    PAGE_RANGE_ZERO = "page_range_zero"
    PAGE_RANGE_REVERSED = "page_range_reversed"
    PAGE_RANGE_OUT_OF_BOUNDS = "page_range_out_of_bounds"
    PAGE_RANGE_TOO_COMPLEX = "page_range_too_complex"
    UNSUPPORTED_OPTION_VALUE = "unsupported_option_value"
    OPTION_CONFLICT = "option_conflict"
    OCR_NOT_AVAILABLE = "ocr_not_available"
    OCR_LANGUAGE_NOT_AVAILABLE = "ocr_language_not_available"
    FEATURE_NOT_ENABLED = "feature_not_enabled"
    PDF_INVALID = "pdf_invalid"
    PDF_CORRUPT = "pdf_corrupt"
    PDF_READ_ERROR = "pdf_read_error"
    PDF_PARSE_FAILED = "pdf_parse_failed"
    PDF_ENCRYPTED = "pdf_encrypted"
    PDF_PASSWORD_INCORRECT = "pdf_password_incorrect"  # noqa: S105  # an error code, not a password
    PDF_UNSUPPORTED_SECURITY = "pdf_unsupported_security"
    PDF_NO_PAGES = "pdf_no_pages"
    PDF_IS_XFA = "pdf_is_xfa"
    DOCUMENT_HAS_NO_TEXT_LAYER = "document_has_no_text_layer"
    PAGE_HAS_NO_TEXT_LAYER = "page_has_no_text_layer"
    DOCUMENT_TOO_COMPLEX = "document_too_complex"
    RATE_LIMIT_REQUESTS = "rate_limit_requests"
    RATE_LIMIT_PAGES = "rate_limit_pages"
    RATE_LIMIT_CONCURRENCY = "rate_limit_concurrency"
    RATE_LIMIT_UPLOADS = "rate_limit_uploads"
    RATE_LIMIT_INSPECT = "rate_limit_inspect"
    RATE_LIMIT_TOC = "rate_limit_toc"
    RATE_LIMIT_NO_VALUE_CONVERSIONS = "rate_limit_no_value_conversions"
    RATE_LIMIT_UNBILLED_WORK = "rate_limit_unbilled_work"
    RATE_LIMIT_NEW_ACCOUNT = "rate_limit_new_account"
    REQUEST_TIMEOUT = "request_timeout"
    CONVERSION_TIMEOUT = "conversion_timeout"
    INTERNAL_ERROR = "internal_error"
    OVERLOADED = "overloaded"
    SERVICE_UNAVAILABLE = "service_unavailable"


@dataclass(frozen=True)
class ErrorSpec:
    code: ErrorCode
    status: int
    type: str
    retryable: bool
    message: str
    help: str


def _spec(code: ErrorCode, status: int, type_: str, message: str, help_: str, *, retryable: bool = False) -> ErrorSpec:
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
        ErrorCode.MALFORMED_JSON,
        400,
        INVALID_REQUEST,
        "The request body is not valid JSON.",
        "The body was sent as application/json but does not parse. Send one JSON object, encoded as UTF-8.",
    ),
    _spec(
        ErrorCode.MULTIPART_MALFORMED,
        400,
        INVALID_REQUEST,
        "The multipart/form-data body does not parse.",
        "Check that the Content-Type header carries the boundary the body uses and that every part is terminated. "
        "HTTP libraries build this for you when given a file.",
    ),
    _spec(
        ErrorCode.MISSING_SOURCE,
        400,
        INVALID_REQUEST,
        "No PDF was supplied.",
        "Send the PDF as a multipart part named `file`, as the raw body with Content-Type application/pdf, "
        "or name a stored file with `file_id` in a JSON body.",
    ),
    _spec(
        ErrorCode.MULTIPLE_SOURCES,
        400,
        INVALID_REQUEST,
        "More than one source was supplied.",
        "A request takes exactly one source: a multipart `file` part, a raw application/pdf body, or a `file_id`. "
        "Remove all but one.",
    ),
    _spec(
        ErrorCode.UNSUPPORTED_SOURCE_TYPE,
        400,
        INVALID_REQUEST,
        "This source type is not supported.",
        "base64 sources are refused permanently and url sources are not available in v1. Upload the bytes "
        "(multipart `file` or application/pdf), or upload once with POST /v1/files and pass `file_id`.",
    ),
    _spec(
        ErrorCode.UNKNOWN_PARAMETER,
        400,
        INVALID_REQUEST,
        "The request has a parameter the API does not know.",
        "`param` names the exact path of the unrecognised field. Remove it or correct its spelling; the OpenAPI "
        "description at /v1/openapi.json lists every accepted field.",
    ),
    _spec(
        ErrorCode.INVALID_PARAMETER_TYPE,
        400,
        INVALID_REQUEST,
        "A parameter has the wrong type.",
        "`param` names the field. Send it with the type the API documents (for example `options.pages` is a string "
        'such as "1-3,7", never an array).',
    ),
    _spec(
        ErrorCode.QUERY_OPTIONS_NOT_ALLOWED,
        400,
        INVALID_REQUEST,
        "Query parameters are not allowed with this body encoding.",
        "Query parameters carry options only when the body is a raw application/pdf. With a multipart or JSON body, "
        "put the options in the `options` object of the body instead.",
    ),
    _spec(
        ErrorCode.METADATA_TOO_LARGE,
        413,
        INVALID_REQUEST,
        "The client metadata is larger than allowed.",
        "`metadata` is limited to 4 KiB of JSON. Send a smaller object, for example an identifier of your own record.",
    ),
    _spec(
        ErrorCode.BAD_REQUEST,
        400,
        INVALID_REQUEST,
        "The request could not be understood.",
        "The HTTP request itself is malformed (for example a broken header). Check the client that sent it.",
    ),
    _spec(
        ErrorCode.URI_TOO_LONG,
        400,
        INVALID_REQUEST,
        "The request line (the URL with its query string) is too long.",
        "The web server refused the request line before reading the request (`details.http_status` is 414, URI "
        "Too Long; the answer is 400, the status of every request-shape error). Query parameters carry only a raw "
        "PDF's short options: send long values, such as a long `pages` expression, in the body instead, as "
        "multipart with an `options` part or JSON with `file_id` and `options` (see the encodings guide).",
    ),
    # Authentication
    _spec(
        ErrorCode.MISSING_API_KEY,
        401,
        AUTHENTICATION,
        "No API key was supplied.",
        "Send the key in the header `Authorization: Bearer <API_KEY>`. A key in a query parameter or in any other "
        "header is not read, and such a request is refused the same way.",
    ),
    _spec(
        ErrorCode.INVALID_API_KEY,
        401,
        AUTHENTICATION,
        "The API key is not valid.",
        "The key is unknown, malformed or fails its checksum. Copy the whole 63-character key again; keys are shown "
        "only once, when created. Console session tokens (svcx_cs_...) are not API keys.",
    ),
    _spec(
        ErrorCode.REVOKED_API_KEY,
        401,
        AUTHENTICATION,
        "The API key has been revoked.",
        "Revocation is permanent. Use another key of the organization or have an administrator create a new one.",
    ),
    _spec(
        ErrorCode.EXPIRED_API_KEY,
        401,
        AUTHENTICATION,
        "The API key has expired.",
        "The key passed its expiry time, usually after a rotation. The message names the hint of the replacement "
        "key; switch to it.",
    ),
    # Payment
    _spec(
        ErrorCode.INSUFFICIENT_CREDITS,
        402,
        PAYMENT_REQUIRED,
        "The organization does not have enough credits for this request.",
        "`details` gives `credits_required`, `credits_available` and `top_up_url`. Top up, or select fewer pages with "
        "`options.pages`. Nothing was billed. With a test key this means the monthly test allowance is used up.",
    ),
    _spec(
        ErrorCode.ACCOUNT_DELINQUENT,
        402,
        PAYMENT_REQUIRED,
        "Spending is frozen because of an open dispute or chargeback.",
        "`details` has `debt_credits` and `credits_required_to_resume`. Contact billing support to settle the dispute; "
        "reading endpoints keep working meanwhile.",
    ),
    # Permission
    _spec(
        ErrorCode.INSUFFICIENT_SCOPE,
        403,
        PERMISSION,
        "The API key lacks the scope this endpoint requires.",
        "Each endpoint requires one scope (convert, files:write, files:read, inspect, account:read); the option "
        '`figures: "crop"` also requires files:write and files:read. `details` names the one needed. Use a key that '
        "has it, or have an administrator create one.",
    ),
    _spec(
        ErrorCode.IP_NOT_ALLOWED,
        403,
        PERMISSION,
        "The request comes from an address outside the key's IP allowlist.",
        "Call from an allowed address, or have an administrator add yours to the key's allowlist (changes take "
        "effect within 10 seconds).",
    ),
    _spec(
        ErrorCode.ACCOUNT_SUSPENDED,
        403,
        PERMISSION,
        "The organization is suspended.",
        "Every request of a suspended organization is refused. Contact support: the message and "
        "`details.support` name where (the service's SVCX_SUPPORT_CONTACT).",
    ),
    _spec(
        ErrorCode.PDF_EXTRACTION_NOT_PERMITTED,
        403,
        PERMISSION,
        "The document's permissions forbid text extraction.",
        "The PDF's author set permission bits that forbid extracting its text. Ask the author for a copy without that "
        "restriction. Nothing was billed.",
    ),
    _spec(
        ErrorCode.DEBUG_NOT_PERMITTED,
        403,
        PERMISSION,
        "Debug output is disabled for this organization.",
        "`debug: true` is refused while the organization's debug policy is disabled (the default for organizations "
        "with a signed data-processing agreement). Send the request without `debug`.",
    ),
    # Not found
    _spec(
        ErrorCode.FILE_NOT_FOUND,
        404,
        NOT_FOUND,
        "No such file.",
        "The file does not exist, was deleted, or belongs to another organization or environment (live and test "
        "keys see different files). Check the `file_id`.",
    ),
    _spec(
        ErrorCode.ENGINE_NOT_FOUND,
        404,
        NOT_FOUND,
        "No such engine.",
        "GET /v1/engines lists the engine identifiers that exist.",
    ),
    _spec(
        ErrorCode.UNKNOWN_ENDPOINT,
        404,
        NOT_FOUND,
        "No such endpoint.",
        "Every route lives under /v1 or /v2; the OpenAPI description at /v1/openapi.json lists them all.",
    ),
    _spec(
        ErrorCode.JOB_NOT_FOUND,
        404,
        NOT_FOUND,
        "No such job.",
        "The job does not exist, belongs to another organization or environment (live and test keys see different "
        "jobs), or ended more than 24 hours ago and was deleted with its result. GET /v2/jobs lists the jobs there "
        "are.",
    ),
    _spec(
        ErrorCode.FILE_EXPIRED,
        410,
        NOT_FOUND,
        "The stored file has passed its retention window.",
        "Stored files are kept for 7 days. Upload the file again with POST /v1/files.",
    ),
    _spec(
        ErrorCode.RESULT_EXPIRED,
        410,
        NOT_FOUND,
        "The cached result has passed its 24-hour window.",
        "Results are kept for 24 hours. Send the conversion again with a new idempotency key.",
    ),
    # Method, negotiation, conflict
    _spec(
        ErrorCode.METHOD_NOT_ALLOWED,
        405,
        INVALID_REQUEST,
        "This endpoint does not accept that HTTP method.",
        "The `Allow` header lists the methods the endpoint accepts. Cross-origin preflight (OPTIONS) is refused on "
        "every authenticated endpoint: call the API from a server, not a browser.",
    ),
    _spec(
        ErrorCode.UNSUPPORTED_ACCEPT,
        406,
        INVALID_REQUEST,
        "The Accept header names no type this endpoint can produce.",
        "Send `Accept: application/json` or `Accept: text/markdown` (or leave it out for JSON).",
    ),
    _spec(
        ErrorCode.IDEMPOTENCY_CONFLICT,
        409,
        INVALID_REQUEST,
        "This idempotency key was used for a different request.",
        "An Idempotency-Key identifies one request (method, path, query, body and Accept). Use a new key for a new "
        "request.",
    ),
    _spec(
        ErrorCode.JOB_FAILED,
        409,
        INVALID_REQUEST,
        "The job failed: it has no result.",
        "`details.error` is the job's error (its code, message and details, as a conversion would have answered "
        "it); nothing was billed. Fix what it names and create a new job.",
    ),
    _spec(
        ErrorCode.JOB_CANCELED,
        409,
        INVALID_REQUEST,
        "The job was canceled: it has no result.",
        "A canceled job keeps no result and bills nothing. Create a new job to convert the document.",
    ),
    _spec(
        ErrorCode.JOB_NOT_CANCELABLE,
        409,
        INVALID_REQUEST,
        "The job has ended and cannot be canceled.",
        "Only a queued or running job can be canceled; `details.status` says how this one ended. A succeeded job "
        "was billed and its result can be fetched until it expires.",
    ),
    _spec(
        ErrorCode.IDEMPOTENCY_IN_PROGRESS,
        409,
        INVALID_REQUEST,
        "A request with this idempotency key is still running.",
        "Wait for the Retry-After interval (1 second) and send the same request again: it will be answered with the "
        "stored result once the first attempt finishes.",
        retryable=True,
    ),
    _spec(
        ErrorCode.UNSUPPORTED_CONTENT_TYPE,
        415,
        INVALID_REQUEST,
        "The Content-Type is not one this endpoint accepts.",
        "Send multipart/form-data (a `file` part), application/json (with `file_id`) or application/pdf (the raw PDF). "
        "A raw PDF sent as application/octet-stream (what generated clients send for a binary body) goes to the "
        "endpoint's raw operation, such as POST /v1/convert/raw; `details.raw_operation` names it.",
    ),
    # Size and quota
    _spec(
        ErrorCode.FILE_TOO_LARGE,
        413,
        INVALID_REQUEST,
        "The upload is larger than allowed.",
        "Uploads are limited to 32 MiB on /v1/convert and 128 MiB on /v1/files. Upload a large file once with "
        "POST /v1/files and convert it by `file_id`, or split the document.",
    ),
    _spec(
        ErrorCode.TOO_MANY_PAGES,
        400,
        INVALID_REQUEST,
        "The page selection exceeds the per-request ceiling.",
        "A request may select at most 200 pages on /v1/convert (5 with a test key), and a job 5,000 pages on "
        "/v2/jobs, counted after clipping to the document. Use `options.pages` to convert the document in parts, or "
        "POST /v2/jobs for a long document.",
    ),
    _spec(
        ErrorCode.STORAGE_QUOTA_EXCEEDED,
        413,
        INVALID_REQUEST,
        "The organization's file storage is full.",
        "`details` gives the quota, the bytes used and the bytes needed. Delete files you no longer need with "
        "DELETE /v1/files/{id}; files also expire after 7 days.",
    ),
    _spec(
        ErrorCode.PDF_TOO_COMPLEX,
        422,
        INVALID_REQUEST,
        "The document's structure exceeds what the service parses.",
        "The file has more objects, deeper nesting or larger streams than the service accepts. Re-save or split it "
        "with a PDF tool and try again.",
    ),
    # Parameter values
    _spec(
        ErrorCode.PAGE_RANGE_INVALID,
        400,
        INVALID_REQUEST,
        "The page-range expression does not parse.",
        "`pages` is a comma-separated list of ascending, non-overlapping ranges: `N`, `N-M` or `N-` (to the end), "
        '1-based, for example "1-3,7,10-".',
    ),
    _spec(
        ErrorCode.PAGE_RANGE_ZERO,
        400,
        INVALID_REQUEST,
        "Page 0 does not exist: pages are numbered from 1.",
        "Number pages from 1.",
    ),
    _spec(
        ErrorCode.PAGE_RANGE_REVERSED,
        400,
        INVALID_REQUEST,
        "A page range runs backwards.",
        "Write ranges low to high: `3-7`, not `7-3`.",
    ),
    _spec(
        ErrorCode.PAGE_RANGE_OUT_OF_BOUNDS,
        422,
        INVALID_REQUEST,
        "The page selection lies entirely past the end of the document.",
        "`details.page_count` gives the document's page count. Select pages within it. Nothing was billed.",
    ),
    _spec(
        ErrorCode.PAGE_RANGE_TOO_COMPLEX,
        400,
        INVALID_REQUEST,
        "The page-range expression is too long.",
        "An expression may be at most 2,048 characters and 1,000 ranges. Merge adjacent pages into ranges.",
    ),
    _spec(
        ErrorCode.UNSUPPORTED_OPTION_VALUE,
        400,
        INVALID_REQUEST,
        "The option value is not available in v1.",
        "`param` names the option. Accepted values: flavor `gfm`; tables `markdown`, `html`, `text`; "
        "fallback `empty`, `error`; figures `none`, `crop`; chunking strategy `structure`, max_tokens 64 to 8191, "
        "overlap_tokens 0 to half of max_tokens (`details` gives the bounds); in version 2, ocr `off`, `auto`, "
        "`force` and at least one of `ocr_languages`.",
    ),
    _spec(
        ErrorCode.OPTION_CONFLICT,
        400,
        INVALID_REQUEST,
        "Two options cannot both be honoured.",
        "The message names both options. Drop one of them.",
    ),
    _spec(
        ErrorCode.OCR_NOT_AVAILABLE,
        400,
        INVALID_REQUEST,
        "OCR is not available in v1, nor where it is not installed.",
        "Set `options.ocr` to `off` or leave it out. Pages without a text layer follow `options.fallback`. "
        "Version 2 (POST /v2/jobs, /v2/inspect) reads scans with `auto` or `force` where GET /v1/engines says `ocr`.",
    ),
    _spec(
        ErrorCode.OCR_LANGUAGE_NOT_AVAILABLE,
        400,
        INVALID_REQUEST,
        "OCR does not read one of the languages asked for.",
        "Use the ISO 639-1 codes GET /v1/engines lists under `ocr_languages`; `details.language` names the one "
        "refused.",
    ),
    _spec(
        ErrorCode.FEATURE_NOT_ENABLED,
        400,
        INVALID_REQUEST,
        "This feature is not enabled for the organization.",
        "Contact support (the address at the foot of this page) to have it enabled.",
    ),
    # Document
    _spec(
        ErrorCode.PDF_INVALID,
        422,
        DOCUMENT,
        "The file is not a PDF.",
        "The bytes do not start a PDF document. Check that you sent the file itself, not an HTML page, an archive "
        "or an error message saved under a .pdf name.",
    ),
    _spec(
        ErrorCode.PDF_CORRUPT,
        422,
        DOCUMENT,
        "The PDF is damaged beyond recovery.",
        "The file's structure is broken and could not be repaired. Re-export it from its source application.",
    ),
    _spec(
        ErrorCode.PDF_READ_ERROR,
        422,
        DOCUMENT,
        "The PDF could not be read to completion.",
        "The file appears cut short. Upload it again and check its size against the original.",
    ),
    _spec(
        ErrorCode.PDF_PARSE_FAILED,
        422,
        DOCUMENT,
        "Parsing failed on a structure of the PDF.",
        "The document uses a construct the parser could not read. Re-saving it with another PDF tool often helps.",
    ),
    _spec(
        ErrorCode.PDF_ENCRYPTED,
        422,
        DOCUMENT,
        "The PDF is encrypted and needs a password.",
        "Send the document's password (multipart part or JSON member `password`, or header X-Svcx-Pdf-Password "
        "with an application/pdf body).",
    ),
    _spec(
        ErrorCode.PDF_PASSWORD_INCORRECT,
        422,
        DOCUMENT,
        "The password does not open the PDF.",
        "Check the password; it is case-sensitive.",
    ),
    _spec(
        ErrorCode.PDF_UNSUPPORTED_SECURITY,
        422,
        DOCUMENT,
        "The PDF uses an unsupported security handler.",
        "The file is protected by a scheme other than password encryption (for example certificates). Remove the "
        "protection in the application that set it.",
    ),
    _spec(
        ErrorCode.PDF_NO_PAGES,
        422,
        DOCUMENT,
        "The PDF has no pages.",
        "The document's page tree is empty; there is nothing to convert.",
    ),
    _spec(
        ErrorCode.PDF_IS_XFA,
        422,
        DOCUMENT,
        "The PDF is a dynamic XFA form.",
        "Dynamic XFA forms carry their content as XML rendered by the viewer, not as PDF pages. Print or flatten the "
        "form to a PDF and convert that.",
    ),
    _spec(
        ErrorCode.DOCUMENT_HAS_NO_TEXT_LAYER,
        422,
        DOCUMENT,
        "No selected page has extractable text.",
        "The pages are images (for example scans) and OCR is not available in v1. Run OCR before uploading. "
        "Nothing was billed.",
    ),
    _spec(
        ErrorCode.PAGE_HAS_NO_TEXT_LAYER,
        422,
        DOCUMENT,
        "A selected page has no extractable text.",
        "You asked for `options.fallback: error`. `details.page` names the page. Exclude it with `options.pages` or "
        "use `fallback: empty`.",
    ),
    _spec(
        ErrorCode.DOCUMENT_TOO_COMPLEX,
        422,
        DOCUMENT,
        "The document exhausted the conversion work budget.",
        "A page holds more drawing objects than the service processes, a stream inflates past what the service "
        "decodes, or the conversion needs more memory than one conversion may take; `details.reason` says which. "
        "Nothing was billed. Convert other pages with `options.pages`, or simplify the document.",
    ),
    # Rate limits
    _spec(ErrorCode.RATE_LIMIT_REQUESTS, 429, RATE_LIMIT, "Too many requests per minute.", _RATE_HELP, retryable=True),
    _spec(ErrorCode.RATE_LIMIT_PAGES, 429, RATE_LIMIT, "Too many pages per minute.", _RATE_HELP, retryable=True),
    _spec(
        ErrorCode.RATE_LIMIT_CONCURRENCY,
        429,
        RATE_LIMIT,
        "Too many requests in flight for this organization.",
        "Your organization has more requests running at once than its concurrency limit. Wait for one to finish, "
        "then retry after Retry-After. This is your own limit; 503 `overloaded` instead means the whole service is "
        "busy.",
        retryable=True,
    ),
    _spec(
        ErrorCode.RATE_LIMIT_UPLOADS, 429, RATE_LIMIT, "Too many upload bytes per minute.", _RATE_HELP, retryable=True
    ),
    _spec(
        ErrorCode.RATE_LIMIT_INSPECT,
        429,
        RATE_LIMIT,
        "Too many inspect requests, or the daily inspect sample budget is used.",
        _RATE_HELP,
        retryable=True,
    ),
    _spec(
        ErrorCode.RATE_LIMIT_TOC,
        429,
        RATE_LIMIT,
        "Too many table-of-contents requests per minute.",
        _RATE_HELP,
        retryable=True,
    ),
    _spec(
        ErrorCode.RATE_LIMIT_NO_VALUE_CONVERSIONS,
        429,
        RATE_LIMIT,
        "Too many conversions this hour produced no text.",
        _RATE_HELP,
        retryable=True,
    ),
    _spec(
        ErrorCode.RATE_LIMIT_UNBILLED_WORK,
        429,
        RATE_LIMIT,
        "Too much unbilled compute this hour.",
        _RATE_HELP,
        retryable=True,
    ),
    _spec(
        ErrorCode.RATE_LIMIT_NEW_ACCOUNT,
        429,
        RATE_LIMIT,
        "New organizations have a daily page cap for their first 7 days.",
        _RATE_HELP,
        retryable=True,
    ),
    # Timeout
    _spec(
        ErrorCode.REQUEST_TIMEOUT,
        408,
        TIMEOUT,
        "The upload did not complete within 20 seconds.",
        "The whole body must arrive within 20 seconds of its first byte. On a slow link, upload once with "
        "POST /v1/files and convert by `file_id`.",
    ),
    _spec(
        ErrorCode.CONVERSION_TIMEOUT,
        504,
        TIMEOUT,
        "The conversion exceeded its wall-clock limit.",
        "`details.pages_completed` says how far it got. Convert fewer pages per request with `options.pages`. "
        "Nothing was billed.",
    ),
    # Server
    _spec(
        ErrorCode.INTERNAL_ERROR,
        500,
        API,
        "An internal error occurred.",
        "Retry the request; include the request_id if you contact support. Nothing was billed.",
        retryable=True,
    ),
    _spec(
        ErrorCode.OVERLOADED,
        503,
        OVERLOADED,
        "The service is at capacity.",
        "The fleet is saturated (`details.reason`: `queue_full`, `queue_wait`, `no_live_workers`), or your "
        "organization's share of it is (`pool_share`: your other conversions hold the workers one organization may "
        "use while others wait; send fewer at once). Back off for the Retry-After interval and retry. Your "
        "organization's own limit of requests in flight is 429 `rate_limit_concurrency`.",
        retryable=True,
    ),
    _spec(
        ErrorCode.SERVICE_UNAVAILABLE,
        503,
        OVERLOADED,
        "A component the service depends on is down.",
        "`details.checks` names what is down. Retry after the Retry-After interval.",
        retryable=True,
    ),
)

CATALOGUE: dict[ErrorCode, ErrorSpec] = {spec.code: spec for spec in _SPECS}


class ServiceError(Exception):
    """An error with a catalogue code, rendered as the envelope by the one exception handler."""

    def __init__(
        self,
        code: ErrorCode,
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
        self.code = self.spec.code
        self.message = message or self.spec.message
        self.param = param
        self.details = details or {}
        self.retry_after_ms = retry_after_ms
        self.headers = headers or {}
        super().__init__(f"{code}: {self.message}")


def error_code(value: str) -> ErrorCode | None:
    """The catalogue code spelled `value`, or None when there is no such code."""
    try:
        return ErrorCode(value)
    except ValueError:
        return None


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
    """The code's documentation page; its path alone where Django's settings are not loaded (the
    web server refusing a request outside the application, core.edge), so the answer still goes out."""
    try:
        base = settings.SVCX_DOCS_URL
    except ImproperlyConfigured:
        base = "/docs"
    return f"{base}/errors/{code}"

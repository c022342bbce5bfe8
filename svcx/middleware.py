"""Middleware that applies to every request: request ids and the access log, CORS, and the
error envelope for whatever fails outside a DRF view."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.gzip import GZipMiddleware
from django.utils import timezone

from accounts import keyformat
from accounts.authentication import client_ip
from billing.usage import request_log_record
from core.context import Usage, context_of
from core.errors import ErrorCode, ServiceError, control_stripped
from core.handlers import error_response, for_a_person, person_error_page, to_service_error
from core.ids import new_request_id
from core.metrics import answer_count

access_log = logging.getLogger("svcx.access")
logger = logging.getLogger("svcx.middleware")

# The only CORS-open endpoints (interface.md 5.1.3); both accept GET only.
CORS_OPEN_PATHS = frozenset({"/v1/health", "/v1/openapi.json"})
_CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Allow-Headers": "*",
    "Access-Control-Expose-Headers": "X-Request-Id",
    "Access-Control-Max-Age": "86400",
}


class RequestIdMiddleware:
    """Gives every request an id, stamps it on the response, and writes one JSON access line.

    The line names the path without its query string: a key wrongly sent as a query parameter
    must never reach the log.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        context = context_of(request)
        context.request_id = new_request_id()
        # The upload deadline counts from here: the headers have arrived, the body starts.
        context.started_monotonic = time.monotonic()
        started_at = timezone.now()
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        except Exception as exc:  # a failure in middleware below us: still answer with the envelope
            response = error_response(to_service_error(exc, request), request)
        if not response.has_header("X-Request-Id"):  # a replayed response keeps its original id
            response["X-Request-Id"] = context.request_id
        auth = context.caller
        duration_ms = round((time.perf_counter() - started) * 1000, 2)
        if auth is not None:
            _record_request(request, response, auth, started_at, duration_ms)
        answer_count(status=response.status_code, code=getattr(response, "svcx_error_code", None))
        access_log.info(
            "request",
            extra={
                "request_id": context.request_id,
                "method": request.method,
                "path": loggable_path(request.path),
                "status": response.status_code,
                "error_code": getattr(response, "svcx_error_code", None),
                "duration_ms": duration_ms,
                "org_id": getattr(auth, "org_id", None),
                "api_key_id": getattr(auth, "key_id", None),
            },
        )
        return response


# Paths whose last segment is a secret (the single-use key reveal token).
_SECRET_PATH_PREFIXES = ("/reveal/",)


def loggable_path(path: str) -> str:
    """The path as the access log and the request log show it: a reveal token and any API key
    or console token pasted into a segment are masked."""
    for prefix in _SECRET_PATH_PREFIXES:
        if path.startswith(prefix):
            return prefix + "[redacted]"
    return keyformat.redacted(path)


def _record_request(
    request: HttpRequest, response: HttpResponse, auth: Any, started_at: datetime, duration_ms: float
) -> None:
    """The request log row of an authenticated request (source of usage and activity reports).

    An error answer bills nothing: it is recorded with no pages and no credits. Credits never
    move here: a capture whose answer became an error is refunded by the conversion service
    (conversion.api.ConvertApi.dispatch), or by billing's reconcile sweeper when no 200 was
    logged for it."""
    context = context_of(request)
    usage = context.usage if context.usage is not None and response.status_code < 400 else Usage()
    try:
        request_log_record(
            request_id=context.request_id,
            organization_id=auth.org_id,
            environment=auth.environment,
            api_key_id=auth.key_id,
            method=request.method or "",
            endpoint=control_stripped(loggable_path(request.path))[:100],  # cut to the column
            status=response.status_code,
            error_code=getattr(response, "svcx_error_code", None) or "",
            pages=usage.pages,
            credits=usage.credits,
            client_ip=client_ip(request),
            duration_ms=duration_ms,
            created_at=started_at,
        )
    except Exception:
        # The answer is already decided; a failed log write must not turn it into an error.
        logger.exception("request log write failed", extra={"request_id": context.request_id})


# The policy of every HTML page (the console, the admin, the reveal page, the docs, the error
# pages): scripts, styles and images only from the service's own static files, so an injected
# inline script, event-handler attribute or style attribute does not run; nothing may frame a
# page (clickjacking of the one-button forms); forms post only to the service.
PAGE_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


class PageSecurityMiddleware(XFrameOptionsMiddleware):
    """X-Frame-Options (Django's, `X_FRAME_OPTIONS`) and the Content-Security-Policy on every
    HTML answer. API answers (JSON, Markdown, CSV) are no pages and go out without them."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        response.headers.setdefault("Content-Security-Policy", PAGE_CONTENT_SECURITY_POLICY)
        return super().process_response(request, response)


class CorsMiddleware:
    """CORS is open on /v1/health and /v1/openapi.json and off everywhere else.

    Preflight on an open path is answered here with 204. Everywhere else no Access-Control-*
    header ever leaves the service; the view refuses OPTIONS with 405.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        open_path = request.path in CORS_OPEN_PATHS
        response = HttpResponse(status=204) if open_path and request.method == "OPTIONS" else self.get_response(request)
        if open_path:
            for name, value in _CORS_HEADERS.items():
                response[name] = value
        else:
            for name in [h for h in response.headers if h.lower().startswith("access-control-")]:
                del response[name]
        return response


class ApiCompressionMiddleware(GZipMiddleware):
    """gzip for API answers of `MIN_BYTES` or more when the client accepts it
    (`Accept-Encoding: gzip`, which requests, httpx, browsers and `curl --compressed` send): a
    200-page JSON result with its elements travels at about a fifth of its size.

    Only /v1 answers are compressed. They carry no secret (a key's secret is shown once, by the
    console and the admin), so compressing them cannot leak one through its size (BREACH); the
    console and the admin are left as they are."""

    MIN_BYTES = 8 * 1024

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if (
            not request.path.startswith("/v1/")
            or not isinstance(response, HttpResponse)
            or len(response.content) < self.MIN_BYTES
        ):
            return response
        return super().process_response(request, response)


class ErrorEnvelopeMiddleware:
    """Turns view exceptions and any non-JSON error response into the envelope.

    DRF views render their own errors through the exception handler; this covers plain Django
    views, the admin and anything that returns an HTML error page (Django's CSRF failure page,
    a bare HttpResponseNotFound). It also works with DEBUG=True, where Django would otherwise
    show its technical pages.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if for_a_person(request):
            return response  # console pages answer their errors in HTML themselves
        if response.status_code >= 400 and not response.get("Content-Type", "").startswith("application/json"):
            converted = error_response(_error_for_status(response.status_code), request)
            if response.has_header("Allow"):
                converted["Allow"] = response["Allow"]
            return converted
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse:
        if for_a_person(request):
            return person_error_page(exception, request)
        return error_response(to_service_error(exception, request), request)


_STATUS_CODES = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.MISSING_API_KEY,
    403: ErrorCode.INSUFFICIENT_SCOPE,
    404: ErrorCode.UNKNOWN_ENDPOINT,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    406: ErrorCode.UNSUPPORTED_ACCEPT,
    413: ErrorCode.FILE_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_CONTENT_TYPE,
    503: ErrorCode.SERVICE_UNAVAILABLE,
}


def _error_for_status(status: int) -> ServiceError:
    code = _STATUS_CODES.get(status, ErrorCode.BAD_REQUEST if status < 500 else ErrorCode.INTERNAL_ERROR)
    return ServiceError(code)

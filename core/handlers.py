"""Rendering of every non-2xx response as the error envelope of interface.md section 7.1.

Everything that can fail a request ends up here: ServiceError raised by our code, DRF's own
exceptions, Django's exceptions (404, 403, suspicious requests, oversized bodies), database
outages and unexpected exceptions. Nothing else builds an error response.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

import kombu.exceptions
import redis
from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import DatabaseError, DataError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from rest_framework import exceptions as drf
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from core.context import context_of
from core.errors import ErrorCode, ServiceError, caller_text, doc_url
from core.ids import new_request_id

logger = logging.getLogger("svcx.errors")


def request_id_of(request: HttpRequest | Request | None) -> str:
    """The id the request middleware gave this request (a fresh one if it never ran)."""
    if request is None:
        return new_request_id()
    context = context_of(request)
    if not context.request_id:
        context.request_id = new_request_id()
    return context.request_id


def envelope(error: ServiceError, request_id: str) -> dict[str, Any]:
    spec = error.spec
    return {
        "error": {
            "type": spec.type,
            "code": error.code,
            "message": error.message,
            "param": error.param,
            "retryable": spec.retryable,
            "retry_after_ms": error.retry_after_ms,
            "doc_url": doc_url(error.code),
            "request_id": request_id,
            "details": error.details,
        }
    }


def _error_headers(error: ServiceError, request_id: str) -> dict[str, str]:
    headers = {"X-Request-Id": request_id, **error.headers}
    if error.retry_after_ms is not None and "Retry-After" not in headers:
        headers["Retry-After"] = str(max(1, math.ceil(error.retry_after_ms / 1000)))
    if error.spec.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="svcx", error="invalid_token"'
    return headers


def error_response(error: ServiceError, request: Any) -> JsonResponse:
    """The envelope for `error` as a plain Django response (usable outside DRF)."""
    request_id = request_id_of(request)
    response = JsonResponse(
        envelope(error, request_id), status=error.spec.status, json_dumps_params={"separators": (",", ":")}
    )
    for name, value in _error_headers(error, request_id).items():
        response[name] = value
    response.svcx_error_code = error.code  # type: ignore[attr-defined]  # read by the access log
    return response


# Pages for people (settings.SVCX_PERSON_PATH_PREFIXES: the customer console) answer errors as
# HTML pages (settings.SVCX_PERSON_ERROR_TEMPLATE); everything else, /v1 above all, keeps the
# JSON envelope.
_PERSON_TITLES = {403: "Not allowed", 404: "Not found", 429: "Too many attempts"}


def for_a_person(request: HttpRequest) -> bool:
    return request.path.startswith(tuple(settings.SVCX_PERSON_PATH_PREFIXES))


def person_error_page(exc: BaseException, request: HttpRequest) -> HttpResponse:
    """An HTML error page: what a console view raised, said in words (a 404 names nothing, so
    another organization's id and a mistyped one read the same)."""
    status = 403 if isinstance(exc, PermissionDenied) else to_service_error(exc, request).spec.status
    if isinstance(exc, ServiceError) and status != 404:
        message = exc.message
    elif status == 403:
        message = str(exc) or "Your role does not allow this."
    elif status == 404:
        message = "There is nothing here, or it belongs to an organization you are not a member of."
    else:
        message = "Something went wrong on our side. Try again in a moment."
    title = _PERSON_TITLES.get(status, "Something went wrong")
    body = render_to_string(settings.SVCX_PERSON_ERROR_TEMPLATE, {"title": title, "message": message}, request=request)
    response = HttpResponse(body, status=status)
    response["X-Request-Id"] = request_id_of(request)
    return response


def _drf_error(exc: drf.APIException, request: Any) -> ServiceError:
    if isinstance(exc, drf.MethodNotAllowed):
        return ServiceError(ErrorCode.METHOD_NOT_ALLOWED)
    if isinstance(exc, drf.NotAcceptable):
        return ServiceError(ErrorCode.UNSUPPORTED_ACCEPT)
    if isinstance(exc, drf.UnsupportedMediaType):
        return ServiceError(ErrorCode.UNSUPPORTED_CONTENT_TYPE)
    if isinstance(exc, drf.ParseError):
        content_type = getattr(request, "content_type", "") or ""
        code = ErrorCode.MULTIPART_MALFORMED if content_type.startswith("multipart/") else ErrorCode.MALFORMED_JSON
        return ServiceError(code)
    if isinstance(exc, drf.NotAuthenticated):
        return ServiceError(ErrorCode.MISSING_API_KEY)
    if isinstance(exc, drf.AuthenticationFailed):
        return ServiceError(ErrorCode.INVALID_API_KEY)
    if isinstance(exc, drf.PermissionDenied):
        return ServiceError(ErrorCode.INSUFFICIENT_SCOPE)
    if isinstance(exc, drf.NotFound):
        return ServiceError(ErrorCode.UNKNOWN_ENDPOINT)
    if isinstance(exc, drf.Throttled):
        wait = int((getattr(exc, "wait", None) or 1) * 1000)
        return ServiceError(ErrorCode.RATE_LIMIT_REQUESTS, retry_after_ms=wait)
    if isinstance(exc, drf.ValidationError):
        return _invalid_input(exc.detail)
    return ServiceError(ErrorCode.BAD_REQUEST) if exc.status_code < 500 else ServiceError(ErrorCode.INTERNAL_ERROR)


_CATALOGUE_CODES = frozenset(ErrorCode)


def _invalid_input(detail: Any) -> ServiceError:
    """An input serializer's first error. One raised with a catalogue code (core.inputs) keeps
    its code and message, with `param` the path of the field that refused it (`options.pages`);
    any other is `invalid_parameter_type` naming the top-level field."""
    path: list[str] = []
    item = detail
    while isinstance(item, (dict, list)) and item:
        if isinstance(item, dict):
            key, item = next(iter(item.items()))
            if key != api_settings.NON_FIELD_ERRORS_KEY:
                path.append(str(key))
        else:
            item = item[0]
    code = getattr(item, "code", None)
    if code in _CATALOGUE_CODES:
        return ServiceError(ErrorCode(code), str(item), param=caller_text(".".join(path)) or None)
    first = str(next(iter(detail))) if isinstance(detail, dict) and detail else None
    return ServiceError(ErrorCode.INVALID_PARAMETER_TYPE, param=first)


# SQLSTATE classes of a PostgreSQL that is away: a connection exception (08), the server
# shutting down, crashed or starting (57P01-57P03). A connection lost on the client's side has
# no SQLSTATE.
_DATABASE_AWAY = ("08", "57P01", "57P02", "57P03")


def outage_error(exc: BaseException) -> ServiceError | None:
    """503 `service_unavailable` (retryable) when `exc` says PostgreSQL or Redis (cache, meters,
    broker, job notifications) is down or restarting, else None. The web side and the
    conversion worker answer the same outage alike. A server that answers but refuses for
    now (PostgreSQL: a deadlock, a serialization failure, a lock or statement timeout, a full
    disk; Redis: out of memory, persistence failing) is `busy`, not `down`: retryable too."""
    if isinstance(exc, (OperationalError, InterfaceError)):
        sqlstate = getattr(exc.__cause__, "sqlstate", None)
        state = "down" if sqlstate is None or sqlstate.startswith(_DATABASE_AWAY) else "busy"
        return ServiceError(ErrorCode.SERVICE_UNAVAILABLE, retry_after_ms=5000, details={"checks": {"database": state}})
    redis_state = _redis_state(exc)
    if redis_state is not None:
        return ServiceError(
            ErrorCode.SERVICE_UNAVAILABLE, retry_after_ms=5000, details={"checks": {"redis": redis_state}}
        )
    return None


# Redis that cannot serve: unreachable, loading its data, or a replica that takes no
# writes or has lost its primary (a fail-over under way).
_REDIS_DOWN = (
    redis.ConnectionError,
    redis.TimeoutError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.MasterDownError,
    redis.exceptions.ClusterDownError,
)
# Redis that answers but refuses for now: out of memory, asked to try again; and, as
# redis-py gives them as plain response errors, persistence failing or a script running.
_REDIS_BUSY = (redis.exceptions.OutOfMemoryError, redis.exceptions.TryAgainError)
# The reply's code opens its message, or follows redis-py's "... of pipeline caused error: ".
_REDIS_BUSY_REPLIES = re.compile(r"(?:^|error: )(?:MISCONF|BUSY) ")


def _redis_state(exc: BaseException) -> str | None:
    """ "down" or "busy" where `exc` says Redis (or the broker on it) cannot serve for now;
    None for any other Redis error (a wrong command or value is a fault of ours)."""
    if isinstance(exc, (*_REDIS_DOWN, kombu.exceptions.OperationalError)):
        return "down"
    if isinstance(exc, _REDIS_BUSY) or (
        isinstance(exc, redis.ResponseError) and _REDIS_BUSY_REPLIES.search(str(exc)) is not None
    ):
        return "busy"
    return None


def to_service_error(exc: BaseException, request: Any) -> ServiceError:
    """Map any exception to the catalogue error it means for the client."""
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, drf.APIException):
        return _drf_error(exc, request)
    if isinstance(exc, Http404):
        return ServiceError(ErrorCode.UNKNOWN_ENDPOINT)
    if isinstance(exc, RequestDataTooBig):
        return ServiceError(ErrorCode.FILE_TOO_LARGE)
    if isinstance(exc, (TooManyFieldsSent, TooManyFilesSent)):
        return ServiceError(ErrorCode.MULTIPART_MALFORMED)
    if isinstance(exc, (SuspiciousOperation, BadRequest)):
        return ServiceError(ErrorCode.BAD_REQUEST)
    if isinstance(exc, PermissionDenied):
        return ServiceError(ErrorCode.INSUFFICIENT_SCOPE)
    if isinstance(exc, (DataError, ValueError)) and "NUL (0x00)" in str(exc):
        # psycopg refuses text with NUL characters before it reaches the server: a request value
        # that input validation should have refused, not a server fault.
        logger.warning("NUL character reached the database layer", extra={"request_id": request_id_of(request)})
        return ServiceError(
            ErrorCode.BAD_REQUEST, "A value in the request contains a NUL character, which is not accepted."
        )
    outage = outage_error(exc)
    if outage is not None:
        logger.error(
            "%s unavailable",
            next(iter(outage.details["checks"])),
            exc_info=exc,
            extra={"request_id": request_id_of(request)},
        )
        return outage
    if isinstance(exc, DatabaseError):
        logger.error("database error", exc_info=exc, extra={"request_id": request_id_of(request)})
        return ServiceError(ErrorCode.INTERNAL_ERROR)
    logger.error("unhandled exception", exc_info=exc, extra={"request_id": request_id_of(request)})
    return ServiceError(ErrorCode.INTERNAL_ERROR)


def drf_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every exception raised inside an API view."""
    request = context.get("request")
    error = to_service_error(exc, request)
    request_id = request_id_of(request)
    response = Response(
        envelope(error, request_id), status=error.spec.status, headers=_error_headers(error, request_id)
    )
    response.svcx_error_code = error.code  # type: ignore[attr-defined]  # read by the access log
    return response


# Django's handlers, for what fails outside a DRF view.
def handler400(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(
        to_service_error(exception, request) if exception else ServiceError(ErrorCode.BAD_REQUEST), request
    )


def handler403(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(ServiceError(ErrorCode.INSUFFICIENT_SCOPE), request)


def handler404(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    return error_response(ServiceError(ErrorCode.UNKNOWN_ENDPOINT), request)


def handler500(request: HttpRequest) -> HttpResponse:
    return error_response(ServiceError(ErrorCode.INTERNAL_ERROR), request)

"""The exceptions the SDK raises: one hierarchy, each carrying the service's error envelope.

Every non-2xx answer of the service is the envelope `{"error": {type, code, message, param,
retryable, retry_after_ms, doc_url, request_id, details}}`. `APIError` carries its members; its
subclass is chosen by `type` (so `except PaymentRequiredError` catches every 402). Match on
`code`, never on `message`. A request that got no answer at all raises `APIConnectionError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from svcx_client.models import Job, JobFailure


class SvcxError(Exception):
    """The base of every exception the SDK raises."""


class ConfigurationError(SvcxError):
    """The client cannot be used as set up (no API key, a bad argument)."""


class WebhookSignatureError(SvcxError):
    """A webhook delivery that does not check out (`svcx_client.webhooks.verify`): no or a
    malformed `Svcx-Signature` header, no signature that matches the secret, a timestamp outside
    the tolerance (a delivery replayed), or a body that is not JSON. Answer it 400 and drop it."""


class APIConnectionError(SvcxError):
    """No answer: the connection failed, broke or timed out, on every attempt."""

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts


class APIError(SvcxError):
    """The service answered with an error envelope (or, from something in front of it, with an
    error that has none: then `code` is None and `message` says what came back)."""

    def __init__(
        self,
        *,
        status: int,
        envelope: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None = None,
        attempts: int = 1,
        fallback_message: str = "",
    ) -> None:
        error: Mapping[str, Any] = (envelope or {}).get("error") or {}
        self.status = status
        self.envelope: dict[str, Any] = dict(envelope or {})
        self.type: str | None = error.get("type")
        self.code: str | None = error.get("code")
        self.message: str = error.get("message") or fallback_message or f"HTTP {status}"
        self.param: str | None = error.get("param")
        self.retryable: bool = bool(error.get("retryable", False))
        self.retry_after_ms: int | None = error.get("retry_after_ms")
        self.doc_url: str | None = error.get("doc_url")
        self.details: dict[str, Any] = dict(error.get("details") or {})
        self.headers: dict[str, str] = dict(headers or {})
        self.request_id: str | None = error.get("request_id") or self.headers.get("x-request-id")
        self.attempts = attempts
        super().__init__(self.summary())

    def __str__(self) -> str:
        return self.summary()  # read when shown: a subclass may learn more after it was made

    def summary(self) -> str:
        """One line: the code, the message, the status and the request id."""
        code = self.code or "http_error"
        request = f", request {self.request_id}" if self.request_id else ""
        return f"{code}: {self.message} (HTTP {self.status}{request})"


class InvalidRequestError(APIError):
    """`invalid_request_error`: the request is wrong (400, 405, 406, 409, 413, 415, 422)."""


class AuthenticationError(APIError):
    """`authentication_error` (401): the key is missing, unknown, revoked or expired."""


class PermissionDeniedError(APIError):
    """`permission_error` (403): scope, IP allowlist, a suspended account, a PDF's permissions."""


class NotFoundError(APIError):
    """`not_found_error` (404, 410): no such file or engine, or it expired."""


class PaymentRequiredError(APIError):
    """`payment_required_error` (402): not enough credits, or spending frozen."""


class RateLimitError(APIError):
    """`rate_limit_error` (429): a meter is used up; `details` names it."""


class DocumentError(APIError):
    """`document_error` (422): the PDF itself cannot be converted."""


class ServiceTimeoutError(APIError):
    """`timeout_error` (408, 504): the upload or the conversion ran out of time."""


class OverloadedError(APIError):
    """`overloaded_error` (503): the service is at capacity or a component is down."""


class InternalServerError(APIError):
    """`api_error` (500), or a 5xx without an envelope."""


class JobFailedError(InvalidRequestError):
    """`job_failed` (409): the job failed and has no result. `job_error` is why (its `code`,
    `message`, `param` and `details`, as a conversion would have answered it); `job` is the
    ended job when `wait_job` raised it. Nothing was billed."""

    job_id: str | None = None
    job: Job | None = None

    @property
    def job_error(self) -> JobFailure | None:
        error = self.details.get("error")
        return JobFailure.from_json(error) if isinstance(error, Mapping) and error.get("code") else None

    def summary(self) -> str:
        """The job's own error first: `pdf_too_complex: ... (job job_..., which failed; ...)`."""
        error = self.job_error
        if error is None:
            return super().summary()
        request = f", request {self.request_id}" if self.request_id else ""
        return (
            f"{error.code}: {error.message} (job {self.job_id or '?'} failed: HTTP {self.status} job_failed{request})"
        )


class JobCanceledError(InvalidRequestError):
    """`job_canceled` (409): the job was canceled and has no result; nothing was billed."""

    job_id: str | None = None
    job: Job | None = None


class JobWaitTimeout(SvcxError):
    """`wait_job` gave up: the job had not ended within `timeout` seconds. It goes on: wait
    again, or cancel it. `job` is the job as last read."""

    def __init__(self, message: str, *, job: Job) -> None:
        super().__init__(message)
        self.message = message
        self.job = job


# Codes with a class of their own, below the class of their type.
_BY_CODE: dict[str, type[APIError]] = {
    "job_failed": JobFailedError,
    "job_canceled": JobCanceledError,
}

_BY_TYPE: dict[str, type[APIError]] = {
    "invalid_request_error": InvalidRequestError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "not_found_error": NotFoundError,
    "payment_required_error": PaymentRequiredError,
    "rate_limit_error": RateLimitError,
    "document_error": DocumentError,
    "timeout_error": ServiceTimeoutError,
    "overloaded_error": OverloadedError,
    "api_error": InternalServerError,
}

_BY_STATUS: dict[int, type[APIError]] = {
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    410: NotFoundError,
    408: ServiceTimeoutError,
    429: RateLimitError,
    503: OverloadedError,
    504: ServiceTimeoutError,
}


def error_class(status: int, envelope: Mapping[str, Any] | None) -> type[APIError]:
    """The exception class of an answer: by the envelope's `code` for the few codes with a
    class of their own, by its `type`, else by the status."""
    error = (envelope or {}).get("error") or {}
    found = _BY_CODE.get(str(error.get("code"))) or _BY_TYPE.get(str(error.get("type")))
    if found is not None:
        return found
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return InternalServerError if status >= 500 else InvalidRequestError

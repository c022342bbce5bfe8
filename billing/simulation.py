"""`X-Svcx-Simulate` on test keys (interface.md 5.3.3, decisions.md 6): the named error, with its
usual status, type, headers and details, plus `details.simulated: true`. Live keys ignore the
header entirely."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from accounts.authentication import Caller
from billing.limits import MeterName
from billing.meters import CONCURRENCY, METERS, MeterState
from core.errors import ErrorCode, ServiceError, caller_text

HEADER = "HTTP_X_SVCX_SIMULATE"


def _rate_limited(meter_name: MeterName, limit: int) -> dict[str, Any]:
    meter = CONCURRENCY if meter_name == MeterName.CONCURRENCY else METERS[meter_name]
    error = MeterState(meter=meter, limit=limit, used=limit, reset_seconds=30).refusal()
    return {
        "message": error.message,
        "details": error.details,
        "retry_after_ms": error.retry_after_ms,
        "headers": error.headers,
    }


def _cases() -> dict[ErrorCode, dict[str, Any]]:
    top_up = f"{settings.SVCX_PUBLIC_URL}/billing"
    return {
        ErrorCode.INSUFFICIENT_CREDITS: {
            "details": {"credits_required": 12, "credits_available": 3, "top_up_url": top_up}
        },
        ErrorCode.ACCOUNT_DELINQUENT: {"details": {"debt_credits": 250, "credits_required_to_resume": 250}},
        ErrorCode.RATE_LIMIT_REQUESTS: _rate_limited(MeterName.REQUESTS, int(settings.SVCX_LIMIT_REQUESTS_PER_MINUTE)),
        ErrorCode.RATE_LIMIT_PAGES: _rate_limited(MeterName.PAGES, int(settings.SVCX_LIMIT_PAGES_PER_MINUTE)),
        ErrorCode.RATE_LIMIT_CONCURRENCY: _rate_limited(MeterName.CONCURRENCY, int(settings.SVCX_LIMIT_CONCURRENCY)),
        ErrorCode.PDF_ENCRYPTED: {},
        ErrorCode.PDF_PASSWORD_INCORRECT: {},
        ErrorCode.PDF_CORRUPT: {},
        ErrorCode.PDF_EXTRACTION_NOT_PERMITTED: {},
        ErrorCode.DOCUMENT_HAS_NO_TEXT_LAYER: {"details": {"pages_checked": 5}},
        ErrorCode.CONVERSION_TIMEOUT: {
            "details": {
                "pages_completed": 3,
                "pages_selected": 5,
                "time_limit_seconds": int(settings.SVCX_CONVERSION_TIME_LIMIT),
            }
        },
        ErrorCode.OVERLOADED: {"retry_after_ms": 5000, "details": {"reason": "queue_full"}},
        ErrorCode.TOO_MANY_PAGES: {"param": "options.pages", "details": {"pages_selected": 8, "max_pages": 5}},
        ErrorCode.PAGE_HAS_NO_TEXT_LAYER: {"details": {"page": 1}},
    }


SIMULATE_CODES = (
    ErrorCode.INSUFFICIENT_CREDITS,
    ErrorCode.ACCOUNT_DELINQUENT,
    ErrorCode.RATE_LIMIT_REQUESTS,
    ErrorCode.RATE_LIMIT_PAGES,
    ErrorCode.RATE_LIMIT_CONCURRENCY,
    ErrorCode.PDF_ENCRYPTED,
    ErrorCode.PDF_PASSWORD_INCORRECT,
    ErrorCode.PDF_CORRUPT,
    ErrorCode.PDF_EXTRACTION_NOT_PERMITTED,
    ErrorCode.DOCUMENT_HAS_NO_TEXT_LAYER,
    ErrorCode.CONVERSION_TIMEOUT,
    ErrorCode.OVERLOADED,
    ErrorCode.TOO_MANY_PAGES,
    ErrorCode.PAGE_HAS_NO_TEXT_LAYER,
)


def simulate(raw: HttpRequest, caller: Caller) -> None:
    """Raise the simulated error a test key asked for; do nothing otherwise."""
    code = raw.META.get(HEADER)
    if code is None or not caller.is_test:
        return
    code = code.strip()
    if code not in SIMULATE_CODES:
        raise ServiceError(
            ErrorCode.UNSUPPORTED_OPTION_VALUE,
            f"X-Svcx-Simulate {caller_text(code)!r} is not a code that can be simulated; "
            f"use one of: {', '.join(SIMULATE_CODES)}.",
            param="X-Svcx-Simulate",
            details={"accepted": list(SIMULATE_CODES)},
        )
    simulated = ErrorCode(code)
    case = _cases()[simulated]
    raise ServiceError(
        simulated,
        case.get("message") or f"Simulated {code} (X-Svcx-Simulate on a test key).",
        param=case.get("param"),
        details={**case.get("details", {}), "simulated": True},
        retry_after_ms=case.get("retry_after_ms"),
        headers=case.get("headers"),
    )

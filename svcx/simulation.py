"""`X-Svcx-Simulate` on test keys (interface.md 5.3.3, decisions.md 6): the named error, with its
usual status, type, headers and details, plus `details.simulated: true`. Live keys ignore the
header entirely."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from accounts.authentication import Caller
from billing.meters import CONCURRENCY, METERS, MeterState
from svcx.errors import ServiceError, caller_text

HEADER = "HTTP_X_SVCX_SIMULATE"


def _rate_limited(meter_name: str, limit: int) -> dict[str, Any]:
    meter = CONCURRENCY if meter_name == "concurrency" else METERS[meter_name]
    error = MeterState(meter=meter, limit=limit, used=limit, reset_seconds=30).refusal()
    return {
        "message": error.message,
        "details": error.details,
        "retry_after_ms": error.retry_after_ms,
        "headers": error.headers,
    }


def _cases() -> dict[str, dict[str, Any]]:
    top_up = f"{settings.SVCX_PUBLIC_URL}/billing"
    return {
        "insufficient_credits": {"details": {"credits_required": 12, "credits_available": 3, "top_up_url": top_up}},
        "account_delinquent": {"details": {"debt_credits": 250, "credits_required_to_resume": 250}},
        "rate_limit_requests": _rate_limited("requests", int(settings.SVCX_LIMIT_REQUESTS_PER_MINUTE)),
        "rate_limit_pages": _rate_limited("pages", int(settings.SVCX_LIMIT_PAGES_PER_MINUTE)),
        "rate_limit_concurrency": _rate_limited("concurrency", int(settings.SVCX_LIMIT_CONCURRENCY)),
        "pdf_encrypted": {},
        "pdf_password_incorrect": {},
        "pdf_corrupt": {},
        "pdf_extraction_not_permitted": {},
        "document_has_no_text_layer": {"details": {"pages_checked": 5}},
        "conversion_timeout": {
            "details": {
                "pages_completed": 3,
                "pages_selected": 5,
                "time_limit_seconds": int(settings.SVCX_CONVERSION_TIME_LIMIT),
            }
        },
        "overloaded": {"retry_after_ms": 5000, "details": {"reason": "queue_full"}},
        "too_many_pages": {"param": "options.pages", "details": {"pages_selected": 8, "max_pages": 5}},
        "page_has_no_text_layer": {"details": {"page": 1}},
    }


SIMULATE_CODES = (
    "insufficient_credits",
    "account_delinquent",
    "rate_limit_requests",
    "rate_limit_pages",
    "rate_limit_concurrency",
    "pdf_encrypted",
    "pdf_password_incorrect",
    "pdf_corrupt",
    "pdf_extraction_not_permitted",
    "document_has_no_text_layer",
    "conversion_timeout",
    "overloaded",
    "too_many_pages",
    "page_has_no_text_layer",
)


def simulate(raw: HttpRequest, caller: Caller) -> None:
    """Raise the simulated error a test key asked for; do nothing otherwise."""
    code = raw.META.get(HEADER)
    if code is None or not caller.is_test:
        return
    code = code.strip()
    if code not in SIMULATE_CODES:
        raise ServiceError(
            "unsupported_option_value",
            f"X-Svcx-Simulate {caller_text(code)!r} is not a code that can be simulated; "
            f"use one of: {', '.join(SIMULATE_CODES)}.",
            param="X-Svcx-Simulate",
            details={"accepted": list(SIMULATE_CODES)},
        )
    case = _cases()[code]
    raise ServiceError(
        code,
        case.get("message") or f"Simulated {code} (X-Svcx-Simulate on a test key).",
        param=case.get("param"),
        details={**case.get("details", {}), "simulated": True},
        retry_after_ms=case.get("retry_after_ms"),
        headers=case.get("headers"),
    )

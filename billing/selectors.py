"""Reads of balances, the ledger and usage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.utils import timezone

from accounts.models import Organization
from billing.ledger import TEST_ALLOWANCE_PAGES, _month_start, _next_month, capture_key
from billing.models import (
    CreditBalance,
    LedgerEntry,
    RequestLog,
    TestAllowance,
    UsageDaily,
    UsageRecord,
    UsageWatermark,
)
from core.errors import ErrorCode, ServiceError, caller_text
from core.ids import is_id
from core.pagination import after_cursor


@dataclass(frozen=True)
class Credits:
    balance: int
    held: int

    @property
    def available(self) -> int:
        return self.balance - self.held


def credits_get(*, organization: Organization, environment: str) -> Credits:
    row = CreditBalance.objects.filter(organization=organization, environment=environment).first()
    return Credits(balance=row.balance, held=row.held) if row else Credits(balance=0, held=0)


@dataclass(frozen=True)
class Capture:
    """What a request's capture billed: its pages and (positive) credits, and how many of the
    pages were read by OCR (billed at their price)."""

    pages: int
    credits: int
    ocr_pages: int = 0


def capture_get(*, request_id: str) -> Capture | None:
    """The capture of the request's hold; None when it was not captured (still held, released,
    or never held). A refund later does not undo it here: the refund is a row of its own."""
    row = (
        LedgerEntry.objects.filter(idempotency_key=capture_key(request_id))
        .values_list("pages", "credits", "details")
        .first()
    )
    if row is None:
        return None
    return Capture(pages=row[0], credits=-row[1], ocr_pages=int((row[2] or {}).get("ocr_pages", 0)))


@dataclass(frozen=True)
class Allowance:
    limit: int
    used: int
    held: int
    resets_at: date


def allowance_get(*, organization: Organization, now: datetime | None = None) -> Allowance:
    month = _month_start(now or timezone.now())
    row = TestAllowance.objects.filter(organization=organization, month=month).first()
    return Allowance(
        limit=TEST_ALLOWANCE_PAGES,
        used=row.used if row else 0,
        held=row.held if row else 0,
        resets_at=_next_month(month),
    )


def ledger_list(
    *, organization: Organization, environment: str, limit: int, starting_after: str | None
) -> tuple[list[LedgerEntry], bool]:
    queryset = LedgerEntry.objects.filter(organization=organization, environment=environment).order_by(
        "-created_at", "-id"
    )
    rows = list(after_cursor(queryset, starting_after, "led")[: limit + 1])
    return rows[:limit], len(rows) > limit


def usage_records_list(
    *,
    organization: Organization,
    environment: str,
    limit: int,
    starting_after: str | None,
    start: datetime | None,
    end: datetime | None,
    api_key_id: str | None,
) -> tuple[list[UsageRecord], bool]:
    queryset = UsageRecord.objects.filter(organization=organization, environment=environment)
    if start is not None:
        queryset = queryset.filter(created_at__gte=start)
    if end is not None:
        queryset = queryset.filter(created_at__lt=end)
    if api_key_id:
        if not is_id(api_key_id, "key"):
            raise ServiceError(
                ErrorCode.INVALID_PARAMETER_TYPE,
                f"`api_key_id` must be a key id (key_...); {caller_text(api_key_id)!r} is not.",
                param="api_key_id",
            )
        queryset = queryset.filter(api_key_id=api_key_id)
    queryset = queryset.order_by("-created_at", "-id")
    rows = list(after_cursor(queryset, starting_after, "use")[: limit + 1])
    return rows[:limit], len(rows) > limit


def usage_daily_list(
    *, organization: Organization, environment: str, start: date | None, end: date | None
) -> list[UsageDaily]:
    queryset = UsageDaily.objects.filter(organization=organization, environment=environment)
    if start is not None:
        queryset = queryset.filter(day__gte=start)
    if end is not None:
        queryset = queryset.filter(day__lte=end)
    return list(queryset.order_by("-day")[:366])


def usage_as_of() -> datetime | None:
    mark = UsageWatermark.objects.filter(name="usage").first()
    return mark.as_of if mark else None


def request_error_codes(*, organization: Organization, request_ids: list[str]) -> dict[str, str]:
    """The error code each of these requests of `organization` answered with ("" for a
    success), from the request log (usage records carry the status only)."""
    return dict(
        RequestLog.objects.filter(organization=organization, request_id__in=request_ids).values_list(
            "request_id", "error_code"
        )
    )

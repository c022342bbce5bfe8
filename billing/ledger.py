"""Credit movements: grants, holds, captures, releases, refunds and adjustments.

Every movement locks the organization's balance row (`select_for_update`), checks, appends
one ledger row and updates the balance in one transaction. Each movement has an idempotency
key with a unique constraint, so replaying a capture or a release changes nothing. Test keys
bill 0 credits; their pages move through the monthly test allowance instead.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from accounts.keyformat import Environment
from accounts.models import Organization
from billing.models import CreditBalance, CreditHold, LedgerEntry, RequestLog, TestAllowance
from core.errors import ErrorCode, ServiceError

CREDITS_PER_PAGE = 1
TEST_ALLOWANCE_PAGES = 5000


def ocr_page_credits() -> int:
    """What a page read by OCR costs (SVCX_OCR_PAGE_CREDITS), instead of CREDITS_PER_PAGE."""
    return int(settings.SVCX_OCR_PAGE_CREDITS)


def page_credits(pages: int, ocr_pages: int = 0, ocr_price: int | None = None) -> int:
    """The credits of `pages`, `ocr_pages` of them read by OCR (at most all of them) at
    `ocr_price` each (by default today's, SVCX_OCR_PAGE_CREDITS)."""
    ocr_pages = max(0, min(ocr_pages, pages))
    price = ocr_page_credits() if ocr_price is None else ocr_price
    return pages * CREDITS_PER_PAGE + ocr_pages * (price - CREDITS_PER_PAGE)


def _ocr_details(ocr_pages: int, ocr_price: int) -> dict[str, int]:
    return {"ocr_pages": ocr_pages, "ocr_page_credits": ocr_price} if ocr_pages else {}


def _held_ocr_price(hold: CreditHold) -> int:
    """The price of a page read by OCR that the hold was made at: its own, else (a hold from
    before holds kept it) its ledger row's itemisation, else today's."""
    if hold.ocr_page_credits is not None:
        return int(hold.ocr_page_credits)
    details = (
        LedgerEntry.objects.filter(idempotency_key=f"{hold.request_id}:hold").values_list("details", flat=True).first()
    )
    return int((details or {}).get("ocr_page_credits") or ocr_page_credits())


def _month_start(now: datetime) -> date:
    return now.date().replace(day=1)


def _next_month(month: date) -> date:
    return (month.replace(day=28) + timedelta(days=4)).replace(day=1)


# How each kind of row moves the balance and the available credits, as multiples of its
# signed `credits`: a hold only reserves (available), a capture spends what was reserved
# (balance; available already dropped at the hold), a release gives the reservation back.
_MOVES: dict[str, tuple[int, int]] = {
    LedgerEntry.Kind.GRANT: (1, 1),
    LedgerEntry.Kind.HOLD: (0, 1),
    LedgerEntry.Kind.CAPTURE: (1, 0),
    LedgerEntry.Kind.RELEASE: (0, 1),
    LedgerEntry.Kind.REFUND: (1, 1),
    LedgerEntry.Kind.ADJUSTMENT: (1, 1),
}


def ledger_entry_changes(entry: LedgerEntry) -> tuple[int, int]:
    """`(balance_change, available_change)` of one row, so that a statement sums like a bank
    statement: the sum of `balance_change` over the rows between two moments is the change of
    `balance`, and the sum of `available_change` the change of `available`."""
    on_balance, on_available = _MOVES[entry.kind]
    return on_balance * entry.credits, on_available * entry.credits


def _locked_balance(organization: Organization, environment: str) -> CreditBalance:
    CreditBalance.objects.get_or_create(organization=organization, environment=environment)
    return CreditBalance.objects.select_for_update().get(organization=organization, environment=environment)


def _locked_allowance(organization: Organization, month: date) -> TestAllowance:
    TestAllowance.objects.get_or_create(organization=organization, month=month)
    return TestAllowance.objects.select_for_update().get(organization=organization, month=month)


def _append(
    *,
    organization: Organization,
    environment: str,
    kind: str,
    credits: int,
    pages: int,
    balance_after: int,
    idempotency_key: str,
    request_id: str = "",
    api_key_id: str = "",
    actor_label: str = "",
    reason: str = "",
    details: dict[str, int] | None = None,
) -> LedgerEntry:
    return LedgerEntry.objects.create(
        organization=organization,
        environment=environment,
        kind=kind,
        credits=credits,
        pages=pages,
        balance_after=balance_after,
        idempotency_key=idempotency_key,
        request_id=request_id,
        api_key_id=api_key_id,
        actor_label=actor_label,
        reason=reason,
        details=details or {},
    )


def credits_grant(
    *, organization: Organization, credits: int, actor_label: str, reason: str = "", idempotency_key: str | None = None
) -> LedgerEntry:
    """Add credits to the live balance. A repeated idempotency key returns the first row."""
    if credits <= 0:
        raise ValueError("a grant is a positive number of credits")
    key = idempotency_key or f"grant:{uuid.uuid4().hex}"
    existing = LedgerEntry.objects.filter(idempotency_key=key).first()
    if existing is not None:
        return existing
    with transaction.atomic():
        balance = _locked_balance(organization, Environment.LIVE)
        CreditBalance.objects.filter(pk=balance.pk).update(balance=F("balance") + credits)
        return _append(
            organization=organization,
            environment=Environment.LIVE,
            kind=LedgerEntry.Kind.GRANT,
            credits=credits,
            pages=0,
            balance_after=balance.balance + credits,
            idempotency_key=key,
            actor_label=actor_label,
            reason=reason,
        )


def credits_adjust(
    *, organization: Organization, credits: int, kind: str, actor_label: str, reason: str
) -> LedgerEntry:
    """A staff refund (positive) or adjustment (either sign) with who and why.

    Raises ValueError when no reason is given or when it would take the available balance
    below zero.
    """
    if kind not in (LedgerEntry.Kind.REFUND, LedgerEntry.Kind.ADJUSTMENT):
        raise ValueError("kind must be refund or adjustment")
    if not reason.strip():
        raise ValueError("a refund or adjustment needs a reason")
    if kind == LedgerEntry.Kind.REFUND and credits <= 0:
        raise ValueError("a refund is a positive number of credits")
    with transaction.atomic():
        balance = _locked_balance(organization, Environment.LIVE)
        if balance.available + credits < 0:
            raise ValueError(f"the adjustment would take the available balance below zero ({balance.available})")
        CreditBalance.objects.filter(pk=balance.pk).update(balance=F("balance") + credits)
        return _append(
            organization=organization,
            environment=Environment.LIVE,
            kind=kind,
            credits=credits,
            pages=0,
            balance_after=balance.balance + credits,
            idempotency_key=f"{kind}:{uuid.uuid4().hex}",
            actor_label=actor_label,
            reason=reason,
        )


@dataclass(frozen=True)
class Hold:
    request_id: str
    credits: int
    pages: int


def credits_hold(
    *,
    organization: Organization,
    environment: str,
    api_key_id: str,
    request_id: str,
    pages: int,
    lease_seconds: float | None = None,
    ocr_pages: int = 0,
) -> Hold:
    """Reserve the credits for `pages`, `ocr_pages` of them at the price of a page read by OCR
    (or, for a test key, the pages of the test allowance).

    Raises ServiceError `insufficient_credits` (details: credits_required, credits_available,
    top_up_url) and leaves nothing behind when the balance or allowance does not cover it.
    Holding again for the same request returns the existing hold.
    """
    existing = CreditHold.objects.filter(request_id=request_id).first()
    if existing is not None:
        return Hold(request_id=request_id, credits=existing.credits, pages=existing.pages)
    lease = timezone.now() + timedelta(seconds=lease_seconds or settings.SVCX_HOLD_LEASE_SECONDS)
    ocr_pages = max(0, min(ocr_pages, pages))
    price = ocr_page_credits()  # kept with the hold: its capture bills at this price
    credits = 0 if environment == Environment.TEST else page_credits(pages, ocr_pages, price)
    with transaction.atomic():
        balance = _locked_balance(organization, environment)
        if environment == Environment.TEST:
            allowance = _locked_allowance(organization, _month_start(timezone.now()))
            remaining = TEST_ALLOWANCE_PAGES - allowance.used - allowance.held
            if pages > remaining:
                raise ServiceError(
                    ErrorCode.INSUFFICIENT_CREDITS,
                    f"The request selects {pages} pages but the monthly test allowance has {max(remaining, 0)} left.",
                    details={
                        "credits_required": pages,
                        "credits_available": max(remaining, 0),
                        "top_up_url": f"{settings.SVCX_PUBLIC_URL}/billing",
                        "test_allowance": True,
                        "allowance_resets_at": _next_month(allowance.month).isoformat() + "T00:00:00Z",
                    },
                )
            TestAllowance.objects.filter(pk=allowance.pk).update(held=F("held") + pages)
        elif balance.available < credits:
            raise ServiceError(
                ErrorCode.INSUFFICIENT_CREDITS,
                f"The request needs {credits} credits but {balance.available} are available.",
                details={
                    "credits_required": credits,
                    "credits_available": balance.available,
                    "top_up_url": f"{settings.SVCX_PUBLIC_URL}/billing",
                },
            )
        CreditBalance.objects.filter(pk=balance.pk).update(held=F("held") + credits)
        CreditHold.objects.create(
            request_id=request_id,
            organization=organization,
            environment=environment,
            api_key_id=api_key_id,
            credits=credits,
            pages=pages,
            ocr_page_credits=price,
            lease_until=lease,
        )
        _append(
            organization=organization,
            environment=environment,
            kind=LedgerEntry.Kind.HOLD,
            credits=-credits,
            pages=pages,
            balance_after=balance.balance,
            idempotency_key=f"{request_id}:hold",
            request_id=request_id,
            api_key_id=api_key_id,
            details=_ocr_details(ocr_pages, price),
        )
    return Hold(request_id=request_id, credits=credits, pages=pages)


def capture_key(request_id: str) -> str:
    """The idempotency key of a request's capture row (one per request)."""
    return f"{request_id}:capture"


def _settle(*, request_id: str, pages_billed: int, ocr_pages: int = 0) -> CreditHold | None:
    """Capture `pages_billed` pages of the hold, `ocr_pages` of them read by OCR, and release
    the rest (0 pages: release all); never more credits than were held.

    Idempotent: a hold already settled is returned unchanged.
    """
    with transaction.atomic():
        hold = CreditHold.objects.select_for_update().filter(request_id=request_id).first()
        if hold is None or hold.status != CreditHold.Status.HELD:
            return hold
        pages_billed = max(0, min(pages_billed, hold.pages))
        price = _held_ocr_price(hold)
        ocr_pages = _ocr_pages_billable(hold, pages_billed, ocr_pages, price)
        credits_billed = 0 if hold.environment == Environment.TEST else page_credits(pages_billed, ocr_pages, price)
        released = hold.credits - credits_billed
        organization = hold.organization
        balance = _locked_balance(organization, hold.environment)
        if hold.environment == Environment.TEST:
            allowance = _locked_allowance(organization, _month_start(hold.created_at))
            TestAllowance.objects.filter(pk=allowance.pk).update(
                held=F("held") - hold.pages, used=F("used") + pages_billed
            )
        CreditBalance.objects.filter(pk=balance.pk).update(
            held=F("held") - hold.credits, balance=F("balance") - credits_billed
        )
        balance_after = balance.balance - credits_billed
        if pages_billed:
            _append(
                organization=organization,
                environment=hold.environment,
                kind=LedgerEntry.Kind.CAPTURE,
                credits=-credits_billed,
                pages=pages_billed,
                balance_after=balance_after,
                idempotency_key=capture_key(request_id),
                request_id=request_id,
                api_key_id=hold.api_key_id,
                details=_ocr_details(ocr_pages, price),
            )
        if released or pages_billed < hold.pages:
            _append(
                organization=organization,
                environment=hold.environment,
                kind=LedgerEntry.Kind.RELEASE,
                credits=released,
                pages=hold.pages - pages_billed,
                balance_after=balance_after,
                idempotency_key=f"{request_id}:release",
                request_id=request_id,
                api_key_id=hold.api_key_id,
            )
        hold.status = CreditHold.Status.CAPTURED if pages_billed else CreditHold.Status.RELEASED
        hold.settled_at = timezone.now()
        hold.save(update_fields=["status", "settled_at"])
    return hold


def _ocr_pages_billable(hold: CreditHold, pages: int, ocr_pages: int, price: int) -> int:
    """Of `ocr_pages` read by OCR, those billed at their `price` (the held one): at most the
    pages billed, and never past the credits held (pages read beyond the pre-flight's count
    bill as text pages)."""
    ocr_pages = max(0, min(ocr_pages, pages))
    extra = price - CREDITS_PER_PAGE
    if hold.environment == Environment.TEST or extra <= 0:
        return ocr_pages
    return max(0, min(ocr_pages, (hold.credits - pages * CREDITS_PER_PAGE) // extra))


def credits_capture(*, request_id: str, pages: int, ocr_pages: int = 0) -> int:
    """Bill the pages actually converted (`ocr_pages` of them read by OCR, at their price; never
    more than was held) and release the rest of the hold. Returns the credits billed (0 for a
    test key, or when the hold was already settled by an earlier call)."""
    hold = CreditHold.objects.filter(request_id=request_id).only("status").first()
    if hold is None or hold.status != CreditHold.Status.HELD:
        return 0
    settled = _settle(request_id=request_id, pages_billed=pages, ocr_pages=ocr_pages)
    if settled is None or settled.status != CreditHold.Status.CAPTURED:
        return 0
    capture = LedgerEntry.objects.filter(idempotency_key=capture_key(request_id)).values_list("credits", flat=True)
    return -int(capture.first() or 0)


def capture_refund(*, request_id: str, reason: str) -> int:
    """Give back a request's capture because its answer became an error after all: a REFUND
    row for the credits captured (for a test key, the pages go back to the allowance).

    Joins the caller's transaction, so the refund commits with the record of the error.
    Idempotent (one refund per request); returns the credits refunded (0 when there was no
    capture or it was refunded already).
    """
    with transaction.atomic():
        hold = CreditHold.objects.select_for_update().filter(request_id=request_id).first()
        if hold is None or hold.status != CreditHold.Status.CAPTURED:
            return 0
        capture = LedgerEntry.objects.filter(idempotency_key=capture_key(request_id)).first()
        key = f"{request_id}:refund"
        if capture is None or LedgerEntry.objects.filter(idempotency_key=key).exists():
            return 0
        credits = -capture.credits
        balance = _locked_balance(hold.organization, hold.environment)
        if hold.environment == Environment.TEST:
            allowance = _locked_allowance(hold.organization, _month_start(hold.created_at))
            TestAllowance.objects.filter(pk=allowance.pk).update(used=F("used") - capture.pages)
        CreditBalance.objects.filter(pk=balance.pk).update(balance=F("balance") + credits)
        _append(
            organization=hold.organization,
            environment=hold.environment,
            kind=LedgerEntry.Kind.REFUND,
            credits=credits,
            pages=capture.pages,
            balance_after=balance.balance + credits,
            idempotency_key=key,
            request_id=request_id,
            api_key_id=hold.api_key_id,
            reason=reason,
        )
    return credits


def credits_release(*, request_id: str) -> None:
    """Return the whole hold: the request bills 0. Safe to call any number of times."""
    _settle(request_id=request_id, pages_billed=0)


def hold_renew(*, request_id: str, lease_seconds: float | None = None) -> bool:
    """Push the lease of a live hold forward; False when it was already settled."""
    lease = timezone.now() + timedelta(seconds=lease_seconds or settings.SVCX_HOLD_LEASE_SECONDS)
    return bool(
        CreditHold.objects.filter(request_id=request_id, status=CreditHold.Status.HELD).update(lease_until=lease)
    )


def holds_sweep() -> int:
    """Release every hold whose lease lapsed (its request died). Returns how many."""
    expired = list(
        CreditHold.objects.filter(status=CreditHold.Status.HELD, lease_until__lt=timezone.now()).values_list(
            "request_id", flat=True
        )[:1000]
    )
    for request_id in expired:
        try:
            credits_release(request_id=request_id)
        except IntegrityError:
            continue  # settled concurrently by its own request
    return len(expired)


# A capture is reconciled once its request had this long to write its log row (which follows
# the capture by a few milliseconds), and for this long after.
RECONCILE_AFTER = timedelta(seconds=60)
RECONCILE_WINDOW = timedelta(hours=1)


def captures_reconcile() -> int:
    """Refund every capture whose request never logged a 200: the process answering it died,
    or the refund of its error answer could not be written then. Returns how many."""
    now = timezone.now()
    orphans = list(
        CreditHold.objects.filter(
            status=CreditHold.Status.CAPTURED,
            settled_at__lt=now - RECONCILE_AFTER,
            settled_at__gte=now - RECONCILE_AFTER - RECONCILE_WINDOW,
        )
        # A version 2 job's capture is made by its worker, after its result is kept: no answer
        # of a request delivers it.
        .exclude(request_id__startswith="job_")
        .exclude(Exists(RequestLog.objects.filter(request_id=OuterRef("request_id"), status=200)))
        .exclude(Exists(LedgerEntry.objects.filter(request_id=OuterRef("request_id"), kind=LedgerEntry.Kind.REFUND)))
        .values_list("request_id", flat=True)[:1000]
    )
    refunded = 0
    for request_id in orphans:
        try:
            refunded += bool(capture_refund(request_id=request_id, reason="no 200 was delivered for the capture"))
        except IntegrityError:
            continue  # refunded concurrently
    return refunded

"""The credit ledger: holds, captures, releases, invariants, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import close_old_connections, connection
from django.db.models import Sum
from django.utils import timezone

from accounts.models import Organization
from billing.ledger import capture_refund, captures_reconcile, credits_capture, credits_hold, credits_release
from billing.models import CreditBalance, CreditHold, LedgerEntry, RequestLog, TestAllowance
from billing.selectors import Capture, capture_get, credits_get
from core.errors import ServiceError
from tests.factories import make_org

pytestmark = [pytest.mark.django_db]
BALANCE_KINDS = ["grant", "capture", "refund", "adjustment"]
AVAILABLE_KINDS = ["grant", "hold", "release", "refund", "adjustment"]


def assert_invariants(org: Organization, environment: str = "live") -> None:
    """Rows of balance-moving kinds sum to the balance; adding holds and releases gives available."""
    rows = LedgerEntry.objects.filter(organization=org, environment=environment)
    credits = credits_get(organization=org, environment=environment)
    assert (rows.filter(kind__in=BALANCE_KINDS).aggregate(s=Sum("credits"))["s"] or 0) == credits.balance
    assert (rows.filter(kind__in=AVAILABLE_KINDS).aggregate(s=Sum("credits"))["s"] or 0) == credits.available
    assert credits.available >= 0


def hold(org: Organization, request_id: str, pages: int, environment: str = "live") -> None:
    credits_hold(organization=org, environment=environment, api_key_id="key_x", request_id=request_id, pages=pages)


def test_hold_reserves_without_lowering_the_balance() -> None:
    org = make_org(credits=10)

    hold(org, "req_1", 4)

    assert credits_get(organization=org, environment="live") == type(credits_get(organization=org, environment="live"))(
        balance=10, held=4
    )
    row = LedgerEntry.objects.get(kind="hold")
    assert (row.credits, row.balance_after, row.request_id) == (-4, 10, "req_1")
    assert_invariants(org)


def test_capture_of_fewer_pages_releases_the_rest() -> None:
    org = make_org(credits=10)
    hold(org, "req_1", 5)

    billed = credits_capture(request_id="req_1", pages=3)

    assert billed == 3
    credits = credits_get(organization=org, environment="live")
    assert (credits.balance, credits.held, credits.available) == (7, 0, 7)
    rows = {r.kind: r for r in LedgerEntry.objects.filter(request_id="req_1")}
    assert (rows["capture"].credits, rows["capture"].balance_after) == (-3, 7)
    assert (rows["release"].credits, rows["release"].balance_after) == (2, 7)
    assert_invariants(org)


def test_pages_read_by_ocr_are_held_and_captured_at_their_price_itemised_never_past_the_hold(settings: Any) -> None:
    settings.SVCX_OCR_PAGE_CREDITS = 3
    org = make_org(credits=20)
    credits_hold(organization=org, environment="live", api_key_id="key_x", request_id="req_1", pages=4, ocr_pages=1)
    assert credits_get(organization=org, environment="live").held == 6

    # Two pages read by OCR where one was held for: the second bills as a text page.
    billed = credits_capture(request_id="req_1", pages=4, ocr_pages=2)

    assert billed == 6
    rows = {r.kind: (r.credits, r.pages, r.details) for r in LedgerEntry.objects.filter(request_id="req_1")}
    itemised = {"ocr_pages": 1, "ocr_page_credits": 3}
    assert rows == {"hold": (-6, 4, itemised), "capture": (-6, 4, itemised)}
    credits_hold(organization=org, environment="live", api_key_id="key_x", request_id="req_2", pages=3, ocr_pages=2)
    assert credits_capture(request_id="req_2", pages=2, ocr_pages=1) == 4  # 1 text page + 1 read by OCR
    release = LedgerEntry.objects.get(request_id="req_2", kind="release")
    assert (release.credits, release.pages, release.details) == (3, 1, {})
    # A job that fails or is canceled gives back the whole hold, OCR pages' price included.
    credits_hold(organization=org, environment="live", api_key_id="key_x", request_id="req_3", pages=2, ocr_pages=2)
    credits_release(request_id="req_3")
    assert [(r.kind, r.credits) for r in LedgerEntry.objects.filter(request_id="req_3").order_by("kind")] == [
        ("hold", -6),
        ("release", 6),
    ]
    assert credits_get(organization=org, environment="live").held == 0
    assert_invariants(org)


@pytest.mark.parametrize("new_price", [2, 5])
def test_a_price_change_after_the_hold_bills_and_itemises_at_the_held_price(settings: Any, new_price: int) -> None:
    settings.SVCX_OCR_PAGE_CREDITS = 3
    org = make_org(credits=20)
    credits_hold(organization=org, environment="live", api_key_id="key_x", request_id="req_1", pages=4, ocr_pages=1)
    settings.SVCX_OCR_PAGE_CREDITS = new_price  # the price moved while the job ran

    billed = credits_capture(request_id="req_1", pages=4, ocr_pages=1)

    assert billed == 6  # 3 text pages + 1 read by OCR at 3, as held
    itemised = {"ocr_pages": 1, "ocr_page_credits": 3}
    assert capture_get(request_id="req_1") == Capture(pages=4, credits=6, ocr_pages=1)
    rows = {r.kind: (r.credits, r.details) for r in LedgerEntry.objects.filter(request_id="req_1")}
    assert rows == {"hold": (-6, itemised), "capture": (-6, itemised)}
    assert credits_get(organization=org, environment="live").balance == 14
    assert_invariants(org)


def test_a_hold_from_before_holds_kept_their_price_bills_at_its_itemised_price(settings: Any) -> None:
    settings.SVCX_OCR_PAGE_CREDITS = 3
    org = make_org(credits=20)
    credits_hold(organization=org, environment="live", api_key_id="key_x", request_id="req_1", pages=2, ocr_pages=1)
    CreditHold.objects.filter(request_id="req_1").update(ocr_page_credits=None)
    settings.SVCX_OCR_PAGE_CREDITS = 5

    assert credits_capture(request_id="req_1", pages=2, ocr_pages=1) == 4
    assert LedgerEntry.objects.get(request_id="req_1", kind="capture").details == {
        "ocr_pages": 1,
        "ocr_page_credits": 3,
    }


def test_release_returns_everything() -> None:
    org = make_org(credits=10)
    hold(org, "req_1", 6)

    credits_release(request_id="req_1")

    assert credits_get(organization=org, environment="live").available == 10
    assert CreditHold.objects.get(request_id="req_1").status == "released"
    assert not LedgerEntry.objects.filter(kind="capture").exists()
    assert_invariants(org)


def test_replayed_capture_or_release_changes_nothing() -> None:
    org = make_org(credits=10)
    hold(org, "req_1", 5)
    credits_capture(request_id="req_1", pages=5)
    rows_before = LedgerEntry.objects.count()

    assert credits_capture(request_id="req_1", pages=5) == 0
    credits_release(request_id="req_1")
    hold(org, "req_1", 5)  # holding again for the same request returns the existing hold

    assert LedgerEntry.objects.count() == rows_before
    assert credits_get(organization=org, environment="live").balance == 5
    assert_invariants(org)


def test_insufficient_credits_leaves_nothing_behind() -> None:
    org = make_org(credits=3)

    with pytest.raises(ServiceError) as caught:
        hold(org, "req_1", 4)

    assert caught.value.code == "insufficient_credits"
    assert caught.value.details["credits_required"] == 4
    assert caught.value.details["credits_available"] == 3
    assert caught.value.details["top_up_url"].startswith("http")
    assert not CreditHold.objects.exists()
    assert LedgerEntry.objects.filter(organization=org).count() == 1
    assert credits_get(organization=org, environment="live").held == 0


def test_database_refuses_a_negative_available_balance() -> None:
    from django.db import IntegrityError, transaction

    org = make_org(credits=2)

    with pytest.raises(IntegrityError), transaction.atomic():
        CreditBalance.objects.filter(organization=org, environment="live").update(held=3)


def test_test_keys_bill_zero_and_count_against_the_allowance() -> None:
    org = make_org(credits=10)
    hold(org, "req_t", 5, environment="test")

    assert credits_capture(request_id="req_t", pages=4) == 0

    allowance = TestAllowance.objects.get(organization=org)
    assert (allowance.used, allowance.held) == (4, 0)
    assert credits_get(organization=org, environment="live").balance == 10
    assert LedgerEntry.objects.get(request_id="req_t", kind="capture").credits == 0
    assert LedgerEntry.objects.get(request_id="req_t", kind="capture").pages == 4


def test_test_allowance_runs_out_at_5000_pages_a_month() -> None:
    org = make_org()
    hold(org, "req_a", 1, environment="test")
    TestAllowance.objects.filter(organization=org).update(used=4997)

    with pytest.raises(ServiceError) as caught:
        hold(org, "req_b", 5, environment="test")

    assert caught.value.code == "insufficient_credits"
    assert caught.value.details["test_allowance"] is True
    assert caught.value.details["credits_available"] == 2  # 5000 - 4997 used - 1 held
    hold(org, "req_c", 2, environment="test")


def _in_threads(count: int, target: Callable[[int], None]) -> None:
    def run(i: int) -> None:
        try:
            target(i)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.django_db(transaction=True)
def test_fifty_parallel_holds_never_overspend_a_balance_of_twenty() -> None:
    org = make_org(credits=20)
    outcomes: list[str] = []

    def attempt(i: int) -> None:
        try:
            hold(org, f"req_{i}", 1)
            outcomes.append("held")
        except ServiceError as exc:
            outcomes.append(exc.code)

    _in_threads(50, attempt)

    assert outcomes.count("held") == 20
    assert outcomes.count("insufficient_credits") == 30
    credits = credits_get(organization=org, environment="live")
    assert (credits.balance, credits.held) == (20, 20)
    assert_invariants(org)


@pytest.mark.django_db(transaction=True)
def test_parallel_captures_and_releases_keep_the_ledger_exact() -> None:
    org = make_org(credits=100)
    for i in range(20):
        hold(org, f"req_{i}", 5)

    def settle(i: int) -> None:
        # Each request is settled twice, concurrently, in two different ways.
        if i % 2:
            credits_capture(request_id=f"req_{i // 2}", pages=3)
        else:
            credits_capture(request_id=f"req_{i // 2}", pages=3) if i % 4 else credits_release(
                request_id=f"req_{i // 2}"
            )

    _in_threads(40, settle)

    assert not CreditHold.objects.filter(status="held").exists()
    assert (
        LedgerEntry.objects.filter(kind="capture").count()
        + LedgerEntry.objects.filter(kind="release", credits=5).count()
        == 20
    )
    assert_invariants(org)


def test_a_capture_refund_restores_the_balance_once() -> None:
    org = make_org(credits=10)
    hold(org, "req_1", 4)
    credits_capture(request_id="req_1", pages=4)

    first = capture_refund(request_id="req_1", reason="answered 500")
    again = capture_refund(request_id="req_1", reason="answered 500")

    assert (first, again) == (4, 0)
    refund = LedgerEntry.objects.get(kind="refund")
    assert (refund.credits, refund.pages, refund.balance_after, refund.request_id) == (4, 4, 10, "req_1")
    assert credits_get(organization=org, environment="live").balance == 10
    assert_invariants(org)


def test_there_is_nothing_to_refund_without_a_capture() -> None:
    org = make_org(credits=10)
    hold(org, "req_1", 4)
    credits_release(request_id="req_1")

    assert capture_refund(request_id="req_1", reason="x") == 0
    assert capture_refund(request_id="req_unknown", reason="x") == 0
    assert not LedgerEntry.objects.filter(kind="refund").exists()
    assert_invariants(org)


def test_reconcile_refunds_captures_that_never_logged_a_200() -> None:
    org = make_org(credits=10)
    for rid in ("req_orphan", "req_answered", "req_recent"):
        hold(org, rid, 2)
        credits_capture(request_id=rid, pages=2)
    long_ago = timezone.now() - timedelta(seconds=90)
    CreditHold.objects.exclude(request_id="req_recent").update(settled_at=long_ago)
    RequestLog.objects.create(
        request_id="req_answered",
        organization=org,
        environment="live",
        api_key_id="key_x",
        method="POST",
        endpoint="/v1/convert",
        status=200,
        pages=2,
        credits=2,
        created_at=long_ago,
    )

    assert captures_reconcile() == 1

    assert list(LedgerEntry.objects.filter(kind="refund").values_list("request_id", flat=True)) == ["req_orphan"]
    assert credits_get(organization=org, environment="live").balance == 6
    assert captures_reconcile() == 0
    assert_invariants(org)

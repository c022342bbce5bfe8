"""The conversion service's steps called directly, with no HTTP request (as a /v2 job's worker
calls them): capture, release and refund move money once, the first settlement stands, and a
job submitted without a view is held by its worker and captured by its request id (real
PostgreSQL, Redis and worker)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from django.db import close_old_connections, connection

from accounts import services as accounts_services
from accounts.authentication import Caller
from accounts.models import Organization
from billing.limits import MeterName
from billing.meters import OrgScope, meter_peek
from billing.models import CreditHold, LedgerEntry, TestAllowance
from billing.selectors import credits_get
from conversion.jobs import job_wait
from conversion.models import ConversionJob
from conversion.options import Options
from conversion.services import (
    Billed,
    Submission,
    conversion_cache_lookup,
    conversion_capture,
    conversion_deliver,
    conversion_hold,
    conversion_meters_charge,
    conversion_meters_require,
    conversion_refund,
    conversion_release,
    conversion_submit,
)
from conversion.store import Source
from core.errors import ErrorCode, ServiceError
from core.ids import new_request_id
from tests.conftest import WorkerProcess
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]


def held(org: Organization, request_id: str, pages: int, environment: str = "live") -> None:
    conversion_hold(organization=org, environment=environment, api_key_id="key_x", request_id=request_id, pages=pages)


def movements(request_id: str) -> list[tuple[str, int]]:
    return sorted(LedgerEntry.objects.filter(request_id=request_id).values_list("kind", "credits"))


def balance(org: Organization, environment: str = "live") -> tuple[int, int]:
    credits = credits_get(organization=org, environment=environment)
    return credits.balance, credits.held


def test_a_capture_bills_the_pages_once_however_often_it_is_called() -> None:
    org = make_org(credits=10)
    held(org, "req_cap", 3)

    first = conversion_capture(request_id="req_cap", pages=3)
    second = conversion_capture(request_id="req_cap", pages=3)

    assert first == second == Billed(pages=3, credits=3, captured=True)
    assert movements("req_cap") == [("capture", -3), ("hold", -3)]
    assert balance(org) == (7, 0)


def test_a_capture_of_fewer_pages_than_held_releases_the_rest() -> None:
    org = make_org(credits=10)
    held(org, "req_part", 5)

    billed = conversion_capture(request_id="req_part", pages=2)

    assert billed == Billed(pages=2, credits=2, captured=True)
    assert movements("req_part") == [("capture", -2), ("hold", -5), ("release", 3)]
    assert balance(org) == (8, 0)


def test_a_release_returns_the_hold_once_however_often_it_is_called() -> None:
    org = make_org(credits=10)
    held(org, "req_rel", 4)

    conversion_release(request_id="req_rel")
    conversion_release(request_id="req_rel")

    assert movements("req_rel") == [("hold", -4), ("release", 4)]
    assert balance(org) == (10, 0)
    assert CreditHold.objects.get(request_id="req_rel").status == CreditHold.Status.RELEASED


def test_a_release_after_the_capture_changes_nothing() -> None:
    org = make_org(credits=10)
    held(org, "req_cr", 3)
    conversion_capture(request_id="req_cr", pages=3)

    conversion_release(request_id="req_cr")

    assert movements("req_cr") == [("capture", -3), ("hold", -3)]
    assert balance(org) == (7, 0)
    assert CreditHold.objects.get(request_id="req_cr").status == CreditHold.Status.CAPTURED


def test_a_capture_after_the_release_bills_nothing() -> None:
    org = make_org(credits=10)
    held(org, "req_rc", 3)
    conversion_release(request_id="req_rc")

    billed = conversion_capture(request_id="req_rc", pages=3)

    assert billed == Billed(pages=0, credits=0, captured=False)
    assert movements("req_rc") == [("hold", -3), ("release", 3)]
    assert balance(org) == (10, 0)
    assert CreditHold.objects.get(request_id="req_rc").status == CreditHold.Status.RELEASED


def test_capture_release_and_refund_of_a_request_that_holds_nothing_move_nothing() -> None:
    org = make_org(credits=10)

    billed = conversion_capture(request_id="req_none", pages=3)
    conversion_release(request_id="req_none")
    refunded = conversion_refund(request_id="req_none", reason="test")

    assert (billed, refunded) == (Billed(pages=0, credits=0, captured=False), 0)
    assert movements("req_none") == []
    assert not CreditHold.objects.filter(request_id="req_none").exists()
    assert balance(org) == (10, 0)


def test_a_capture_records_what_the_job_billed() -> None:
    org = make_org(credits=10)
    job = ConversionJob.objects.create(
        request_id="req_job",
        organization=org,
        environment="live",
        api_key_id="key_x",
        source_key="jobs/none.pdf",
        sha256="0" * 64,
        status=ConversionJob.Status.SUCCEEDED,
        pages_completed=2,
    )
    held(org, job.pk, 2)

    conversion_capture(request_id=job.pk, pages=2)

    job.refresh_from_db()
    assert (job.pages_billed, job.credits_billed) == (2, 2)


def test_a_test_key_capture_bills_its_pages_at_no_credits_against_the_allowance() -> None:
    org = make_org(credits=10)
    held(org, "req_test", 3, environment="test")

    billed = conversion_capture(request_id="req_test", pages=3)

    assert billed == Billed(pages=3, credits=0, captured=True)
    allowance = TestAllowance.objects.get(organization=org)
    assert (allowance.used, allowance.held) == (3, 0)
    assert balance(org) == (10, 0)


def test_a_refund_gives_a_capture_back_once() -> None:
    org = make_org(credits=10)
    held(org, "req_ref", 3)
    conversion_capture(request_id="req_ref", pages=3)

    first = conversion_refund(request_id="req_ref", reason="answered 500 internal_error after the capture")
    second = conversion_refund(request_id="req_ref", reason="again")

    assert (first, second) == (3, 0)
    assert movements("req_ref") == [("capture", -3), ("hold", -3), ("refund", 3)]
    assert LedgerEntry.objects.get(request_id="req_ref", kind="refund").reason == (
        "answered 500 internal_error after the capture"
    )
    assert balance(org) == (10, 0)


def test_a_refund_of_a_released_hold_moves_nothing() -> None:
    org = make_org(credits=10)
    held(org, "req_rr", 3)
    conversion_release(request_id="req_rr")

    assert conversion_refund(request_id="req_rr", reason="test") == 0
    assert movements("req_rr") == [("hold", -3), ("release", 3)]
    assert balance(org) == (10, 0)


def in_threads(*steps: Callable[[], Any]) -> None:
    """Run the steps at once, each in its own thread with its own database connection."""
    barrier = threading.Barrier(len(steps))

    def run(step: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            step()
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_a_capture_and_a_release_racing_settle_the_hold_once() -> None:
    """The worker's success and a cancel of a v2 job may meet: one of them settles the hold."""
    org = make_org(credits=50)
    for i in range(5):
        held(org, f"req_race{i}", 3)

    for i in range(5):
        in_threads(
            partial(conversion_capture, request_id=f"req_race{i}", pages=3),
            partial(conversion_release, request_id=f"req_race{i}"),
        )

    for i in range(5):
        rows = movements(f"req_race{i}")
        assert rows in ([("capture", -3), ("hold", -3)], [("hold", -3), ("release", 3)])
    captured = CreditHold.objects.filter(organization=org, status=CreditHold.Status.CAPTURED).count()
    assert balance(org) == (50 - 3 * captured, 0)


def limited_org(**limits: int) -> Organization:
    org = make_org(credits=100)
    for meter, value in limits.items():
        accounts_services.organization_set_limit(organization=org, meter=meter, value=value)
    return org


@pytest.mark.usefixtures("one_window")
def test_the_page_meters_count_the_selected_pages_and_refuse_past_the_limit() -> None:
    org = limited_org(pages=5)
    scope = OrgScope(organization=org, environment="live")

    conversion_meters_charge(scope=scope, pages=4)
    conversion_meters_require(caller=scope)
    with pytest.raises(ServiceError) as refused:
        conversion_meters_charge(scope=scope, pages=2)

    assert refused.value.code == ErrorCode.RATE_LIMIT_PAGES
    assert meter_peek(scope, MeterName.PAGES).used == 4


@pytest.mark.usefixtures("one_window")
def test_pages_refused_by_the_new_account_meter_are_not_kept_by_the_pages_meter() -> None:
    org = limited_org(pages=100, new_account=5)
    scope = OrgScope(organization=org, environment="live")

    with pytest.raises(ServiceError) as refused:
        conversion_meters_charge(scope=scope, pages=6)

    assert refused.value.code == ErrorCode.RATE_LIMIT_NEW_ACCOUNT
    assert (meter_peek(scope, MeterName.PAGES).used, meter_peek(scope, MeterName.NEW_ACCOUNT).used) == (0, 0)


@pytest.mark.usefixtures("one_window")
def test_a_used_up_meter_of_work_refuses_before_any_work_and_counts_nothing() -> None:
    org = limited_org(pages=3)
    scope = OrgScope(organization=org, environment="live")
    conversion_meters_charge(scope=scope, pages=3)

    with pytest.raises(ServiceError) as refused:
        conversion_meters_require(caller=scope)

    assert refused.value.code == ErrorCode.RATE_LIMIT_PAGES
    assert meter_peek(scope, MeterName.PAGES).used == 3


# --- a job with no request: submitted, held by its worker, captured or released by its id ----


def submitted(org: Organization, pdf: Path, options: Options | None = None) -> tuple[Caller, str, Submission]:
    """Submit a conversion of `pdf` as a /v2 submission would: no HTTP request, the steps alone."""
    caller = Caller(api_key=make_key(org).api_key, organization=org)
    source = Source(sha256=hashlib.sha256(pdf.read_bytes()).hexdigest(), path=pdf)
    options = options or Options()
    cache = conversion_cache_lookup(caller=caller, source=source, options=options, password=None)
    assert cache.result is None
    submission = Submission(source=source, password=None, options=options, cache_key=cache.key)
    request_id = new_request_id()
    conversion_submit(caller=caller, request_id=request_id, submission=submission)
    return caller, request_id, submission


def finished(request_id: str) -> ConversionJob:
    """The job once its worker ended it (the wait keeps it watched, as /v1 does)."""
    try:
        return job_wait(request_id=request_id, is_client_gone=lambda: False)
    except ServiceError as exc:
        pytest.fail(f"the job did not finish: {exc.code}")


def test_a_submitted_job_is_held_by_its_worker_and_captured_by_its_request_id(
    session_worker: WorkerProcess, three_pages: Path
) -> None:
    org = make_org(credits=10)
    caller, request_id, submission = submitted(org, three_pages)

    job = finished(request_id)

    assert job.status == ConversionJob.Status.SUCCEEDED
    assert movements(request_id) == [("hold", -3)]
    assert balance(org) == (10, 3)
    billed = conversion_capture(request_id=request_id, pages=job.pages_completed)
    assert billed == Billed(pages=3, credits=3, captured=True)
    assert conversion_capture(request_id=request_id, pages=job.pages_completed) == billed
    assert movements(request_id) == [("capture", -3), ("hold", -3)]
    assert balance(org) == (7, 0)
    # The result a later GET fetches is stored under the job's cache key.
    options = submission.options or Options()
    again = conversion_cache_lookup(caller=caller, source=submission.source, options=options, password=None)
    assert again.result is not None
    assert again.result.pages_converted == 3


def test_a_job_that_fails_on_its_worker_holds_nothing(session_worker: WorkerProcess, three_pages: Path) -> None:
    org = make_org(credits=10)
    _, request_id, _ = submitted(org, three_pages, Options(pages="7-9"))

    job = finished(request_id)

    assert job.status == ConversionJob.Status.FAILED
    assert (job.error or {}).get("code") == ErrorCode.PAGE_RANGE_OUT_OF_BOUNDS
    assert conversion_capture(request_id=request_id, pages=3) == Billed(pages=0, credits=0, captured=False)
    assert not CreditHold.objects.filter(request_id=request_id, status=CreditHold.Status.HELD).exists()
    assert not LedgerEntry.objects.filter(request_id=request_id, kind="capture").exists()
    assert balance(org) == (10, 0)


def test_a_result_is_delivered_and_billed_once(session_worker: WorkerProcess, three_pages: Path) -> None:
    org = make_org(credits=10)
    _, request_id, _ = submitted(org, three_pages)
    job = finished(request_id)

    delivery = conversion_deliver(job=job, is_client_gone=lambda: False)
    with pytest.raises(ServiceError) as second:
        conversion_deliver(job=job, is_client_gone=lambda: False)

    assert delivery.billed == Billed(pages=3, credits=3, captured=True)
    assert [p["page"] for p in delivery.payload["pages"]] == [1, 2, 3]
    assert second.value.code == ErrorCode.INTERNAL_ERROR
    assert movements(request_id) == [("capture", -3), ("hold", -3)]
    assert balance(org) == (7, 0)
    delivered = ConversionJob.objects.get(pk=request_id)
    assert delivered.delivered_at is not None
    assert (delivered.pages_billed, delivered.credits_billed) == (3, 3)


def test_a_client_gone_before_the_delivery_gets_nothing_and_pays_nothing(
    session_worker: WorkerProcess, three_pages: Path
) -> None:
    org = make_org(credits=10)
    _, request_id, _ = submitted(org, three_pages)
    job = finished(request_id)

    with pytest.raises(ServiceError) as gone:
        conversion_deliver(job=job, is_client_gone=lambda: True)

    assert gone.value.code == ErrorCode.BAD_REQUEST
    assert movements(request_id) == [("hold", -3), ("release", 3)]
    assert balance(org) == (10, 0)
    assert ConversionJob.objects.get(pk=request_id).delivered_at is None

"""A conversion bills only with a delivered 200: the web side captures as it answers, and an
error answer after the capture refunds it (real worker, real PostgreSQL and Redis)."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import Client
from django.utils import timezone

from billing.ledger import credits_hold
from billing.models import CreditHold, LedgerEntry, RequestLog, TestAllowance
from billing.selectors import credits_get
from conversion import api, idempotency
from conversion.models import ConversionJob
from conversion.runner import _Clock, job_run
from tests.conftest import WorkerProcess
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def account(session_worker: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "live": make_key(org), "test": make_key(org, "test")}


def post_pdf(client: Client, secret: str, path: Path, **headers: Any) -> Any:
    return client.post(
        "/v1/convert", data=path.read_bytes(), content_type="application/pdf", **bearer(secret), **headers
    )


def movements(request_id: str) -> list[tuple[str, int]]:
    return sorted(LedgerEntry.objects.filter(request_id=request_id).values_list("kind", "credits"))


def fail_rendering(monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    """The answer fails after the capture: rendering the 200 raises."""

    def broken(**kwargs: Any) -> Any:
        raise exc

    monkeypatch.setattr(api, "_render", broken)


def test_a_delivered_200_is_captured_by_the_answering_side(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    response = post_pdf(client, account["live"].secret, three_pages)

    assert response.status_code == 200
    rid = response["X-Request-Id"]
    assert movements(rid) == [("capture", -3), ("hold", -3)]
    job = ConversionJob.objects.get(pk=rid)
    assert job.delivered_at is not None
    assert (job.pages_billed, job.credits_billed) == (3, 3)
    assert credits_get(organization=account["org"], environment="live").balance == 97


def test_a_failure_after_the_capture_refunds_it_with_the_error_record(
    client: Client, account: dict[str, Any], three_pages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_rendering(monkeypatch, RuntimeError("late failure"))

    response = post_pdf(client, account["live"].secret, three_pages)

    assert_envelope(response, 500, "internal_error")
    rid = response["X-Request-Id"]
    assert movements(rid) == [("capture", -3), ("hold", -3), ("refund", 3)]
    refund = LedgerEntry.objects.get(request_id=rid, kind="refund")
    assert (refund.pages, refund.balance_after) == (3, 100)
    assert "500 internal_error" in refund.reason
    credits = credits_get(organization=account["org"], environment="live")
    assert (credits.balance, credits.held) == (100, 0)
    log = RequestLog.objects.get(request_id=rid)
    assert (log.status, log.error_code, log.pages, log.credits) == (500, "internal_error", 0, 0)


def test_a_redis_failure_after_the_capture_is_503_and_refunded(
    client: Client, account: dict[str, Any], three_pages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_rendering(monkeypatch, redis.ConnectionError("Connection refused"))

    response = post_pdf(client, account["live"].secret, three_pages)

    error = assert_envelope(response, 503, "service_unavailable")
    assert error["retryable"] is True
    assert error["details"] == {"checks": {"redis": "down"}}
    assert movements(response["X-Request-Id"]) == [("capture", -3), ("hold", -3), ("refund", 3)]
    assert credits_get(organization=account["org"], environment="live").balance == 100


def test_a_failure_storing_the_idempotent_answer_refunds(
    client: Client, account: dict[str, Any], three_pages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("could not store the answer")

    monkeypatch.setattr(idempotency, "idempotency_finish", broken)

    response = post_pdf(client, account["live"].secret, three_pages, HTTP_IDEMPOTENCY_KEY="late-1")

    assert_envelope(response, 500, "internal_error")
    assert movements(response["X-Request-Id"]) == [("capture", -3), ("hold", -3), ("refund", 3)]
    assert credits_get(organization=account["org"], environment="live").balance == 100


def test_a_test_key_refund_returns_the_allowance_pages(
    client: Client, account: dict[str, Any], three_pages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_rendering(monkeypatch, RuntimeError("late failure"))

    response = post_pdf(client, account["test"].secret, three_pages)

    assert_envelope(response, 500, "internal_error")
    refund = LedgerEntry.objects.get(request_id=response["X-Request-Id"], kind="refund")
    assert (refund.credits, refund.pages, refund.environment) == (0, 3, "test")
    assert TestAllowance.objects.get(organization=account["org"]).used == 0


@pytest.mark.parametrize("pdf", ["not a pdf", "three pages, pages out of range"])
def test_an_error_answer_never_leaves_a_capture(
    client: Client, account: dict[str, Any], three_pages: Path, tmp_path: Path, pdf: str
) -> None:
    if pdf == "not a pdf":
        response = client.post(
            "/v1/convert", data=b"%PDF-1.7 nothing", content_type="application/pdf", **bearer(account["live"].secret)
        )
    else:
        response = client.post(
            "/v1/convert?pages=7-9",
            data=three_pages.read_bytes(),
            content_type="application/pdf",
            **bearer(account["live"].secret),
        )

    assert response.status_code >= 400
    rid = response["X-Request-Id"]
    assert not LedgerEntry.objects.filter(request_id=rid, kind="capture").exists()
    assert not CreditHold.objects.filter(request_id=rid, status=CreditHold.Status.HELD).exists()
    assert credits_get(organization=account["org"], environment="live").balance == 100


def watched_job(org: Any, status: str, seen_seconds_ago: float) -> ConversionJob:
    return ConversionJob.objects.create(
        request_id=f"req_watch{int(seen_seconds_ago)}{status}",
        organization=org,
        environment="live",
        api_key_id="key_x",
        source_key="jobs/nonexistent.pdf",
        sha256="0" * 64,
        status=status,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        waiter_seen_at=timezone.now() - timedelta(seconds=seen_seconds_ago),
    )


def test_a_running_job_whose_request_died_is_given_up_and_its_hold_released() -> None:
    org = make_org(credits=10)
    lost = watched_job(org, ConversionJob.Status.RUNNING, 30)
    credits_hold(organization=org, environment="live", api_key_id="key_x", request_id=lost.pk, pages=4)
    watched = watched_job(org, ConversionJob.Status.RUNNING, 1)
    lost_clock, watched_clock = _Clock(lost, time.monotonic() + 60), _Clock(watched, time.monotonic() + 60)
    lost_clock._checked = watched_clock._checked = 0.0  # due for a check

    assert (lost_clock(), watched_clock()) == (True, False)
    assert lost_clock.cancelled
    assert ConversionJob.objects.get(pk=lost.pk).status == ConversionJob.Status.ABANDONED
    assert ConversionJob.objects.get(pk=watched.pk).status == ConversionJob.Status.RUNNING


def test_a_queued_job_whose_request_died_is_not_run() -> None:
    org = make_org(credits=10)
    job = watched_job(org, ConversionJob.Status.QUEUED, 30)

    job_run(request_id=job.pk)

    assert ConversionJob.objects.get(pk=job.pk).status == ConversionJob.Status.ABANDONED
    assert not CreditHold.objects.filter(request_id=job.pk).exists()
    assert credits_get(organization=org, environment="live").available == 10

"""Every rate-limit meter through HTTP (limits made small per organization), with headers."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts import services
from accounts.models import Organization
from billing.meters import concurrency_acquire
from billing.models import CreditHold, LedgerEntry
from core.redis import redis_client
from tests.conftest import WorkerProcess, text_pdf
from tests.conversion.engine.pdfs import make_pdf
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]


def limited(**limits: int) -> tuple[Organization, str]:
    org = make_org(credits=1000)
    for meter, value in limits.items():
        services.organization_set_limit(organization=org, meter=meter, value=value)
    return org, make_key(org).secret


def assert_429(response: Any, code: str, meter: str) -> dict[str, Any]:
    error = assert_envelope(response, 429, code)
    assert error["type"] == "rate_limit_error"
    assert error["retryable"] is True
    assert int(response["Retry-After"]) >= 1
    assert error["retry_after_ms"] >= 1
    assert error["details"]["meter"] == meter
    assert {"limit", "window_seconds"} <= set(error["details"])
    return error


def convert(client: Client, secret: str, path: Path, query: str = "") -> Any:
    return client.post(f"/v1/convert{query}", data=path.read_bytes(), content_type="application/pdf", **bearer(secret))


def no_work_billed(org: Organization) -> None:
    assert (
        not LedgerEntry.objects.filter(organization=org)
        .exclude(kind="grant")
        .exclude(kind__in=["hold", "capture", "release"])
        .exists()
    )
    assert not CreditHold.objects.filter(organization=org, status="held").exists()


@pytest.fixture(autouse=True)
def _same_window() -> None:
    """The meters count in fixed one-minute windows: a test's requests must share one."""
    if 60 - time.time() % 60 < 5:
        time.sleep(60 - time.time() % 60 + 0.1)


def test_every_authenticated_response_carries_the_requests_headers(client: Client) -> None:
    _, secret = limited(requests=5)

    first = client.get("/v1/account", **bearer(secret))
    second = client.get("/v1/account", **bearer(secret))

    assert first["x-ratelimit-limit-requests"] == "5"
    assert (first["x-ratelimit-remaining-requests"], second["x-ratelimit-remaining-requests"]) == ("4", "3")
    assert 0 <= int(first["x-ratelimit-reset-requests"]) <= 60


def test_requests_per_minute(client: Client) -> None:
    _, secret = limited(requests=2)
    client.get("/v1/account", **bearer(secret))
    client.get("/v1/credits/ledger", **bearer(secret))

    response = client.get("/v1/account", **bearer(secret))

    error = assert_429(response, "rate_limit_requests", "requests")
    assert error["details"]["limit"] == 2
    assert response["x-ratelimit-remaining-requests"] == "0"


def test_a_new_limit_applies_on_the_next_request(client: Client) -> None:
    org, secret = limited(requests=1)
    client.get("/v1/account", **bearer(secret))
    assert client.get("/v1/account", **bearer(secret)).status_code == 429

    services.organization_set_limit(organization=org, meter="requests", value=100)

    assert client.get("/v1/account", **bearer(secret)).status_code == 200


def test_limits_are_per_environment(client: Client) -> None:
    org, secret = limited(requests=1)
    client.get("/v1/account", **bearer(secret))

    assert client.get("/v1/account", **bearer(make_key(org, "test").secret)).status_code == 200


def test_pages_per_minute_counts_selected_pages(client: Client, session_worker: WorkerProcess, tmp_path: Path) -> None:
    org, secret = limited(pages=4)
    first = convert(client, secret, text_pdf(tmp_path / "a.pdf", ["one", "two", "three"]))
    assert first.status_code == 200
    assert first["x-ratelimit-remaining-pages"] == "1"

    response = convert(client, secret, text_pdf(tmp_path / "b.pdf", ["four", "five"]))

    error = assert_429(response, "rate_limit_pages", "pages")
    assert error["details"]["limit"] == 4
    assert (error["details"]["requested"], error["details"]["exceeds_limit"]) == (2, False)
    assert LedgerEntry.objects.filter(organization=org, kind="hold").count() == 1  # only the first request held


def test_a_request_larger_than_the_whole_limit_says_a_retry_cannot_help(
    client: Client, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    org, secret = limited(pages=2)

    response = convert(client, secret, text_pdf(tmp_path / "big.pdf", ["one", "two", "three"]))

    error = assert_429(response, "rate_limit_pages", "pages")
    assert (error["details"]["requested"], error["details"]["exceeds_limit"]) == (3, True)
    assert "cannot succeed" in error["message"]
    assert not LedgerEntry.objects.filter(organization=org, kind="hold").exists()


def test_concurrency_limit(client: Client, session_worker: WorkerProcess, three_pages: Path) -> None:
    org, secret = limited(concurrency=1)
    concurrency_acquire(type("S", (), {"organization": org, "org_id": org.id, "environment": "live"})(), "req_other")

    assert_429(convert(client, secret, three_pages), "rate_limit_concurrency", "concurrency")
    assert not LedgerEntry.objects.filter(organization=org, kind="hold").exists()


def test_a_crashed_requests_concurrency_lease_lapses(
    client: Client, session_worker: WorkerProcess, three_pages: Path
) -> None:
    org, secret = limited(concurrency=1)
    client_redis = redis_client()
    assert client_redis is not None
    # The lease a crashed process left: its expiry has passed.
    client_redis.zadd(f"svcx:conc:{org.id}:live", {"req_crashed": time.time() - 1})

    response = convert(client, secret, three_pages)

    assert response.status_code == 200
    assert response["x-ratelimit-limit-concurrency"] == "1"
    assert client_redis.zcard(f"svcx:conc:{org.id}:live") == 0  # released after the request


def test_lease_lasts_no_longer_than_the_wall_clock_limit_allows(settings: Any) -> None:
    org = make_org()
    before = time.time()

    concurrency_acquire(type("S", (), {"organization": org, "org_id": org.id, "environment": "live"})(), "req_x")
    after = time.time()

    client_redis = redis_client()
    assert client_redis is not None
    expiry = client_redis.zscore(f"svcx:conc:{org.id}:live", "req_x")
    # Long enough for the longest request (its wall-clock limit and grace), and no longer
    # than that and half a minute, so that a crashed request's slot comes back.
    lease = settings.SVCX_CONVERSION_TIME_LIMIT + settings.SVCX_CONVERSION_GRACE + 30
    assert before + lease <= expiry <= after + lease


def test_upload_bytes_per_minute_refused_before_reading(client: Client, three_pages: Path) -> None:
    _, secret = limited(uploads=100)

    error = assert_429(convert(client, secret, three_pages), "rate_limit_uploads", "uploads")
    assert error["details"]["exceeds_limit"] is True


def test_upload_bytes_already_read_count_against_the_next_upload(
    client: Client, session_worker: WorkerProcess, three_pages: Path
) -> None:
    size = three_pages.stat().st_size
    _, secret = limited(uploads=size * 5 // 2)

    first = convert(client, secret, three_pages)
    second = convert(client, secret, three_pages)

    assert (first.status_code, second.status_code) == (200, 200)
    assert second["x-ratelimit-remaining-uploads"] == str(size * 5 // 2 - 2 * size)
    # The third alone fits the limit; with the bytes of the first two it does not.
    error = assert_429(convert(client, secret, three_pages), "rate_limit_uploads", "uploads")
    assert error["details"]["exceeds_limit"] is False


def test_inspect_per_minute_and_daily_sample_budget(
    client: Client, session_worker: WorkerProcess, three_pages: Path
) -> None:
    _, secret = limited(inspect=1)
    first = client.post("/v1/inspect", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(secret))
    assert first["x-ratelimit-remaining-inspect"] == "0"
    assert_429(
        client.post("/v1/inspect", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(secret)),
        "rate_limit_inspect",
        "inspect",
    )

    _, other = limited(inspect_sample_pages=3)
    assert (
        client.post(
            "/v1/inspect", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(other)
        ).status_code
        == 200
    )
    error = assert_429(
        client.post("/v1/inspect", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(other)),
        "rate_limit_inspect",
        "inspect_sample_pages",
    )
    assert error["details"]["window_seconds"] == 86400


def test_toc_per_minute(client: Client, session_worker: WorkerProcess, three_pages: Path) -> None:
    _, secret = limited(toc=1)
    client.post("/v1/toc", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(secret))

    assert_429(
        client.post("/v1/toc", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(secret)),
        "rate_limit_toc",
        "toc",
    )


def test_conversions_that_produce_no_text(client: Client, session_worker: WorkerProcess, tmp_path: Path) -> None:
    _, secret = limited(no_value_conversions=1)
    blank = make_pdf(tmp_path / "blank.pdf", [[]])
    assert_envelope(convert(client, secret, blank), 422, "document_has_no_text_layer")

    assert_429(
        convert(client, secret, text_pdf(tmp_path / "t.pdf", ["words"])),
        "rate_limit_no_value_conversions",
        "no_value_conversions",
    )


def test_unbilled_work_per_hour(client: Client, session_worker: WorkerProcess, three_pages: Path) -> None:
    org, live = limited(unbilled_work=1)
    test = make_key(org, "test").secret

    # Billed work is not unbilled work: the live conversions all run.
    assert [convert(client, live, three_pages, f"?pages={n}").status_code for n in (1, 2, 3)] == [200, 200, 200]
    # A test key's conversion bills nothing: its worker seconds (at least one, rounded up)
    # use up the hour's allowance of the test environment.
    assert convert(client, test, three_pages).status_code == 200
    assert_429(convert(client, test, three_pages, "?pages=2"), "rate_limit_unbilled_work", "unbilled_work")


def test_an_unbilled_work_limit_of_zero_admits_nothing(client: Client, three_pages: Path) -> None:
    org, secret = limited(unbilled_work=0)

    assert_429(convert(client, secret, three_pages), "rate_limit_unbilled_work", "unbilled_work")
    no_work_billed(org)


def test_new_account_pages_per_day(client: Client, session_worker: WorkerProcess, three_pages: Path) -> None:
    org, secret = limited(new_account=2)

    assert_429(convert(client, secret, three_pages), "rate_limit_new_account", "new_account")

    Organization.objects.filter(pk=org.pk).update(created_at=timezone.now() - timedelta(days=8))
    assert convert(client, secret, three_pages).status_code == 200


def test_a_replay_counts_against_no_meter(client: Client, session_worker: WorkerProcess, three_pages: Path) -> None:
    _, secret = limited(requests=2)
    headers = {"HTTP_IDEMPOTENCY_KEY": "once"}
    first = client.post(
        "/v1/convert", data=three_pages.read_bytes(), content_type="application/pdf", **headers, **bearer(secret)
    )
    for _ in range(3):
        replay = client.post(
            "/v1/convert", data=three_pages.read_bytes(), content_type="application/pdf", **headers, **bearer(secret)
        )
        assert replay["Idempotent-Replayed"] == "true"

    assert first.status_code == 200
    assert client.get("/v1/account", **bearer(secret)).status_code == 200
    assert client.get("/v1/account", **bearer(secret)).status_code == 429


def test_a_concurrency_limit_of_zero_admits_nothing(
    client: Client, session_worker: WorkerProcess, three_pages: Path
) -> None:
    org, secret = limited(concurrency=0)

    assert_429(convert(client, secret, three_pages), "rate_limit_concurrency", "concurrency")
    assert not LedgerEntry.objects.filter(organization=org, kind="hold").exists()

"""One organization cannot hold every worker (issue 23, item 4): its jobs hold at most its share
of the pool (or more while slots stay free for others), a job past it waits in its web thread,
and the meters of work are checked when the job's turn comes, not only when it was sent."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from billing.limits import MeterName
from conversion.models import ConversionJob
from conversion.share import _give_back, _take, pool_share, share_of
from core.errors import ServiceError
from tests.conftest import WorkerProcess, start_worker
from tests.conversion.engine.pdfs import Text, make_pdf
from tests.factories import bearer, make_key, make_org
from workers.heartbeat import worker_heartbeat, worker_heartbeat_clear


def _caller(org: Any) -> Any:
    from accounts.authentication import Caller

    return Caller(api_key=make_key(org).api_key, organization=org)


@pytest.fixture
def pool(settings: Any) -> Iterator[str]:
    """A queue served by two announced workers of 2 slots each (a pool of 4); its name."""
    queue = f"share{time.monotonic_ns()}-convert"
    hosts = [f"{queue}-{n}@x" for n in range(2)]
    for host in hosts:
        worker_heartbeat(hostname=host, queues=[queue], slots=2)
    yield queue
    for host in hosts:
        worker_heartbeat_clear(hostname=host, queues=[queue])


@pytest.mark.django_db
def test_an_organization_holds_its_share_or_more_while_a_slot_stays_free_for_others(pool: str) -> None:
    a, b = _caller(make_org("A")), _caller(make_org("B"))

    # Pool of 4, share 50 % (2 slots), one slot reserved for the others.
    taken_by_a = [_take(pool, a, f"req_a{n}") for n in range(4)]
    taken_by_b = _take(pool, b, "req_b0")

    assert share_of(4) == 2
    assert taken_by_a == [True, True, True, False]  # 2 by share, a third while one stays free
    assert taken_by_b  # the slot kept free: B is never kept waiting by A
    _give_back(pool, a, "req_a0")
    assert _take(pool, a, "req_a3") is False  # A is past its share and nothing is free beyond B's
    _give_back(pool, b, "req_b0")
    assert _take(pool, a, "req_a3") is True


@pytest.mark.django_db
def test_a_job_past_its_share_waits_then_answers_503_pool_share(pool: str, settings: Any) -> None:
    settings.SVCX_QUEUE_WAIT_LIMIT = 0.5
    a = _caller(make_org("A"))
    for n in range(3):
        assert _take(pool, a, f"req_a{n}")
    started = time.monotonic()

    with (
        pytest.raises(ServiceError) as refused,
        pool_share(queue=pool, caller=a, request_id="req_a3", is_client_gone=lambda: False),
    ):
        pytest.fail("the block must not run without a slot")

    assert time.monotonic() - started >= 0.5
    assert (refused.value.code, refused.value.details["reason"]) == ("overloaded", "pool_share")
    assert refused.value.retry_after_ms


@pytest.mark.django_db
def test_a_waiting_job_gets_the_slot_its_organization_gives_back(pool: str, settings: Any) -> None:
    settings.SVCX_QUEUE_WAIT_LIMIT = 10
    a = _caller(make_org("A"))
    for n in range(3):
        assert _take(pool, a, f"req_a{n}")
    threading.Timer(0.3, _give_back, (pool, a, "req_a1")).start()

    with pool_share(queue=pool, caller=a, request_id="req_a3", is_client_gone=lambda: False):
        assert _take(pool, a, "req_a4") is False  # req_a3 holds the slot req_a1 gave back


# -- through a real worker pool ------------------------------------------------------------


@pytest.fixture
def pool_of_two(settings: Any, tmp_path: Path, transactional_db: None) -> Iterator[WorkerProcess]:
    prefix = f"fair{time.monotonic_ns()}-"
    settings.SVCX_QUEUE_PREFIX = prefix
    settings.SVCX_QUEUE_WAIT_LIMIT = 120  # A's jobs past its share wait their turn, however slow the machine
    worker = start_worker(tmp_path, queues=f"{prefix}convert", env={"SVCX_QUEUE_PREFIX": prefix}, concurrency=2)
    yield worker
    worker.stop()


def _long_pdf(path: Path, pages: int) -> bytes:
    lines: list[Any] = [
        Text(40, 780 - 12 * i, f"Line {i} of a long page with many words to lay out.", size=9) for i in range(60)
    ]
    return make_pdf(path, [lines] * pages).read_bytes()


def _convert(secret: str, pdf: bytes, answers: list[int]) -> None:
    try:
        response = Client().post("/v1/convert", data=pdf, content_type="application/pdf", **bearer(secret))
        answers.append(response.status_code)
    finally:
        connection.close()


def test_another_organization_s_conversion_starts_while_one_floods_the_pool(
    pool_of_two: WorkerProcess, tmp_path: Path
) -> None:
    a, b = make_org("Flood", credits=1000), make_org("Other", credits=10)
    a_secret, b_secret = make_key(a).secret, make_key(b).secret
    floods: list[int] = []
    threads = [
        threading.Thread(target=_convert, args=(a_secret, _long_pdf(tmp_path / f"a{n}.pdf", 20 + n), floods))
        for n in range(3)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while not ConversionJob.objects.filter(organization=a, status="running").exists():
        assert time.monotonic() < deadline, "A's first job never started"
        time.sleep(0.05)
    other: list[int] = []

    _convert(b_secret, _long_pdf(tmp_path / "b.pdf", 1), other)
    for thread in threads:
        thread.join(timeout=180)

    b_job = ConversionJob.objects.get(organization=b)
    a_jobs = list(ConversionJob.objects.filter(organization=a).order_by("started_at"))
    assert other == [200]
    assert floods == [200, 200, 200]
    # A's share of a pool of two is one slot: B's job started at once, before A's second and
    # third (without sharing, both were queued in front of it), and ended before A's first.
    assert b_job.started_at < a_jobs[1].started_at
    assert b_job.finished_at < a_jobs[0].finished_at


def test_the_unbilled_work_meter_is_checked_when_the_job_s_turn_comes(
    pool_of_two: WorkerProcess, tmp_path: Path
) -> None:
    org = make_org("Hostile", credits=100)
    org.limits = {MeterName.UNBILLED_WORK: 1}
    org.save(update_fields=["limits"])
    secret = make_key(org).secret
    # No text layer, and `fallback=error`: each conversion fails (422) and bills nothing.
    blank = make_pdf(tmp_path / "blank.pdf", [[]]).read_bytes()
    answers: list[tuple[int, str]] = []

    def send() -> None:
        try:
            response = Client().post(
                "/v1/convert?fallback=error", data=blank, content_type="application/pdf", **bearer(secret)
            )
            answers.append((response.status_code, response.json()["error"]["code"]))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    # Both were admitted with the meter at 0; the second waited for the organization's slot and
    # met the meter the first had used up (a job that bills nothing counts its worker seconds).
    assert sorted(answers) == [(422, "page_has_no_text_layer"), (429, "rate_limit_unbilled_work")]
    assert ConversionJob.objects.filter(organization=org).count() == 1

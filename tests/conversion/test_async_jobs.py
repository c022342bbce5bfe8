"""Version 2 jobs on real workers, PostgreSQL, Redis and the store: parts parsed in parallel,
pages rendered in order as one conversion renders them, money held, captured or released,
workers lost mid-job, cancel, time limits and expiry."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.db import OperationalError
from django.utils import timezone
from svcx_client.webhooks import verify

from billing.models import CreditHold, LedgerEntry
from billing.selectors import credits_get
from conversion import async_runner, engine
from conversion.async_jobs import (
    LEAD_TASK,
    PART_TASK,
    JobSource,
    async_job_cancel,
    async_job_create,
    job_result_bytes,
    parts_plan,
)
from conversion.async_runner import async_job_lead, async_jobs_sweep
from conversion.metrics import FleetCollector
from conversion.models import Job, JobPart
from conversion.store import Store, object_put, store
from core.errors import ServiceError
from core.ids import new_request_id
from core.redis import redis_client
from tests.conversion.engine.pdfs import Op, Text, lines, make_pdf
from tests.factories import make_key, make_org
from tests.webhooks.receiver import Receiver, running
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create
from workers.heartbeat import worker_heartbeat, worker_heartbeat_clear

pytestmark = [pytest.mark.django_db(transaction=True)]

WORDS = ["harvest", "river", "market", "winter", "council", "bridge", "letter", "garden", "school", "railway"]
# Small parts and quick loss detection, in the test process and in the workers alike.
JOB_ENV = {
    "SVCX_JOB_PART_PAGES": "3",
    "SVCX_JOB_LOST_AFTER": "3s",
    "SVCX_JOB_FLUSH_PAGES": "2",
    "SVCX_JOB_SWEEP_INTERVAL": "1s",
    "SVCX_WORKER_HEARTBEAT_INTERVAL": "1s",
}
JOB_QUEUES = "default,jobs,jobs_test"


@pytest.fixture(autouse=True)
def job_settings(settings: Any) -> None:
    settings.SVCX_JOB_PART_PAGES = 3
    settings.SVCX_JOB_LOST_AFTER = 3.0
    settings.SVCX_JOB_FLUSH_PAGES = 2


def book_page(n: int, rows: int = 10) -> list[Op]:
    """A page of a book: a running foot with its number, a chapter heading every fifth page,
    prose whose last word on page 7 is hyphenated over the break (across two parts of 3)."""
    ops: list[Op] = [Text(300, 40, f"{n} THE RIVER BOOK", 8)]
    top = 720
    if n % 5 == 1:
        ops.append(Text(72, top, f"Chapter {n // 5 + 1}: The {WORDS[n % len(WORDS)]}", 18, "B"))
        top -= 40
    body = [
        f"The {WORDS[(n + i) % len(WORDS)]} and the {WORDS[(n * 3 + i) % len(WORDS)]} were talked about on {n}."
        for i in range(rows)
    ]
    if n == 6:
        body[-1] = "The council met at the bridge to talk about the har-"
    if n == 7:
        body[0] = "vest and the railway, then about the winter market."
    return [*ops, *lines(72, top, body)]


@pytest.fixture
def book(tmp_path: Path) -> Path:
    return make_pdf(tmp_path / "book.pdf", [book_page(n) for n in range(1, 15)])


@pytest.fixture
def account() -> dict[str, Any]:
    org = make_org(credits=1000)
    return {"org": org, "key": make_key(org)}


def create(
    account: dict[str, Any],
    path: Path,
    pages: list[int] | None = None,
    options: dict[str, Any] | None = None,
    **kw: Any,
) -> Job:
    """A job for the PDF, its upload kept in the async store as the API keeps it; `options`
    beside the defaults."""
    job_id = "job_" + new_request_id().split("_", 1)[1]
    key = object_put(Store.ASYNC, f"{job_id}/input.pdf", path)
    count = engine.preflight(path).page_count or 0
    return async_job_create(
        job_id=job_id,
        organization=account["org"],
        environment="live",
        api_key_id=account["key"].api_key.id,
        request_id=new_request_id(),
        source=JobSource(store=Store.ASYNC, key=key, sha256="0" * 64),
        options={"tables": "markdown", "fallback": "empty", "flavor": "gfm", **(options or {})},
        pages=pages or list(range(1, count + 1)),
        **kw,
    )


def wait_ended(job: Job, timeout: float = 60) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status in Job.ENDED:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job still {job.status} after {timeout} s")


def movements(job: Job) -> list[tuple[str, int]]:
    return sorted(LedgerEntry.objects.filter(request_id=job.id).values_list("kind", "credits"))


def stored_names(job: Job) -> list[str]:
    root = Path(store(Store.ASYNC).path(job.id))
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


def test_parts_are_planned_as_equal_runs_of_the_selection() -> None:
    assert parts_plan(7, 3) == [(0, 3), (3, 6), (6, 7)]
    assert parts_plan(3, 3) == [(0, 3)]


def test_a_lead_alone_parses_every_part_and_writes_its_pages_as_it_goes(account: dict[str, Any], book: Path) -> None:
    # No worker consumes the jobs queue: the part messages wait unread, and the lead run here
    # parses each part itself.
    job = create(account, book)

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.page_chunks == 7  # 14 pages written two at a time while it ran
    assert json.loads(job_result_bytes(job=job))["markdown"] == engine.convert(book).markdown
    assert movements(job) == [("capture", -14), ("hold", -14)]


def test_a_job_of_the_pdfium_engine_parses_its_parts_with_it(
    account: dict[str, Any], book: Path, settings: Any
) -> None:
    settings.SVCX_PDFIUM_ENGINE = True
    job = create(account, book, options={"engine": engine.PDFIUM_ENGINE_ID})

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    body = json.loads(job_result_bytes(job=job))
    assert body["engine"] == {"id": engine.PDFIUM_ENGINE_ID, "version": engine.PDFIUM_ENGINE_VERSION}
    chosen = engine.convert(book, options=engine.ConvertOptions(engine=engine.PDFIUM_ENGINE_ID))
    assert body["markdown"] == chosen.markdown


def test_a_job_without_the_credits_is_refused_and_leaves_nothing(book: Path) -> None:
    org = make_org(credits=5)
    with pytest.raises(ServiceError) as refused:
        create({"org": org, "key": make_key(org)}, book)

    assert refused.value.code == "insufficient_credits"
    assert not Job.objects.exists()
    assert not CreditHold.objects.exists()
    assert credits_get(organization=org, environment="live").held == 0


def test_a_canceled_job_bills_nothing_and_keeps_nothing(account: dict[str, Any], book: Path) -> None:
    job = create(account, book)

    job = async_job_cancel(job=job)
    async_job_lead(job_id=job.id)  # a lead arriving after the cancel does nothing

    assert job.status == Job.Status.CANCELED
    assert movements(job) == [("hold", -14), ("release", 14)]
    assert not job.result_key
    assert stored_names(job) == ["input.pdf"]
    assert async_job_cancel(job=job).status == Job.Status.CANCELED  # twice is once


def test_a_job_whose_pdf_is_gone_fails_with_its_credits_released(account: dict[str, Any], book: Path) -> None:
    job = create(account, book)
    store(Store.ASYNC).delete(job.source_key)

    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error["code"] == "internal_error"
    assert movements(job) == [("hold", -14), ("release", 14)]


def test_the_sweeper_ends_a_job_past_its_time_limit_and_deletes_expired_ones(
    account: dict[str, Any], book: Path, settings: Any
) -> None:
    job = create(account, book)
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=2))

    assert async_jobs_sweep()["timed_out"] == 1

    job.refresh_from_db()
    assert (job.status, job.error["code"]) == (Job.Status.FAILED, "conversion_timeout")
    assert movements(job) == [("hold", -14), ("release", 14)]
    Job.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert async_jobs_sweep()["expired"] == 1
    assert not Job.objects.filter(pk=job.pk).exists()
    assert stored_names(job) == []


def test_the_sweeper_gives_a_lost_lead_to_another_worker(account: dict[str, Any], book: Path) -> None:
    job = create(account, book)
    # A lead that claimed the job, then its worker died: no beat for longer than allowed.
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING,
        lead_attempts=1,
        lead_sent_at=timezone.now() - timedelta(seconds=20),
        lead_heartbeat_at=timezone.now() - timedelta(seconds=10),
    )

    assert async_jobs_sweep()["leads_sent"] == 1
    assert async_jobs_sweep()["leads_sent"] == 0  # one task since it was lost, not one a sweep
    async_job_lead(job_id=job.id)  # what the message sent runs

    job.refresh_from_db()
    assert (job.status, job.lead_attempts) == (Job.Status.SUCCEEDED, 2)
    assert movements(job) == [("capture", -14), ("hold", -14)]


@pytest.fixture
def own_queues(settings: Any) -> Iterator[str]:
    """Jobs queues of this test's own (SVCX_QUEUE_PREFIX), so their length is this test's tasks."""
    prefix = f"sweep{time.monotonic_ns()}-"
    settings.SVCX_QUEUE_PREFIX = prefix
    yield prefix + "jobs"
    redis_client().delete(prefix + "jobs", prefix + "jobs_test")


def tasks_in(queue: str) -> list[tuple[str, list[Any]]]:
    """The tasks waiting in a queue of the broker: (name, arguments), oldest first."""
    messages = [json.loads(m) for m in reversed(redis_client().lrange(queue, 0, -1))]
    return [(m["headers"]["task"], json.loads(base64.b64decode(m["body"]))[0]) for m in messages if m]


def test_the_sweeper_sends_again_the_tasks_the_broker_lost_and_only_those(
    account: dict[str, Any], book: Path, own_queues: str, settings: Any
) -> None:
    settings.SVCX_JOB_RESEND_AFTER = 30
    job = create(account, book)  # a lead and five parts, their tasks in the queue
    assert [name for name, _ in tasks_in(own_queues)] == [LEAD_TASK] + [PART_TASK] * 5
    JobPart.objects.filter(job=job).update(sent_at=timezone.now() - timedelta(seconds=60))
    Job.objects.filter(pk=job.pk).update(lead_sent_at=timezone.now() - timedelta(seconds=60))

    # A queue as long as the work waiting: however old the tasks, none is sent twice.
    assert async_jobs_sweep()["parts_resent"] == 0

    # The broker restarted without its data: every task is sent again, once.
    redis_client().delete(own_queues)
    counts = async_jobs_sweep()
    assert (counts["parts_resent"], counts["leads_resent"]) == (5, 1)
    assert sorted(tasks_in(own_queues)) == sorted(
        [(LEAD_TASK, [job.id])] + [(PART_TASK, [job.id, index]) for index in range(5)]
    )
    again = async_jobs_sweep()
    assert (again["parts_resent"], again["leads_resent"]) == (0, 0)

    # Two part tasks lost: the two whose tasks were sent longest ago (and long enough) go again.
    JobPart.objects.filter(job=job, index__in=[1, 3]).update(sent_at=timezone.now() - timedelta(seconds=90))
    JobPart.objects.filter(job=job, index=4).update(sent_at=timezone.now() - timedelta(seconds=10))
    redis_client().delete(own_queues)
    redis_client().rpush(own_queues, *[b"{}"] * 4)  # four tasks left of six
    assert async_jobs_sweep()["parts_resent"] == 2
    assert tasks_in(own_queues)[:2] == [(PART_TASK, [job.id, 1]), (PART_TASK, [job.id, 3])]


def test_a_part_is_taken_back_early_from_a_worker_gone_as_a_whole_never_from_a_live_one(
    account: dict[str, Any], book: Path, own_queues: str, settings: Any
) -> None:
    settings.SVCX_JOB_LOST_AFTER = 60
    settings.SVCX_WORKER_HEARTBEAT_TTL = 3
    job = create(account, book)
    worker_heartbeat(hostname="alive@test", queues=[own_queues])
    try:
        # Each part claimed 10 s ago and silent since: past the heartbeat's TTL, within LOST_AFTER.
        silent = timezone.now() - timedelta(seconds=10)
        for index, worker in [(0, "alive@test"), (1, "gone@test"), (2, "")]:
            JobPart.objects.filter(job=job, index=index).update(
                status=JobPart.Status.RUNNING,
                worker=worker,
                heartbeat_at=silent,
                sent_at=silent - timedelta(seconds=1),
                attempts=1,
            )

        assert async_jobs_sweep()["parts_requeued"] == 1  # the part of the worker that is gone
        assert tasks_in(own_queues)[-1] == (PART_TASK, [job.id, 1])
        assert async_jobs_sweep()["parts_requeued"] == 0  # one task since it was lost
        for index in range(3):
            async_runner.async_job_part(job_id=job.id, index=index, worker="other@test")
    finally:
        worker_heartbeat_clear(hostname="alive@test", queues=[own_queues])

    parts = {p.index: p for p in JobPart.objects.filter(job=job, index__lt=3)}
    # The live worker's part is left to it (a slow task); the one of no known worker waits for LOST_AFTER.
    assert (parts[0].status, parts[0].worker, parts[0].attempts) == (JobPart.Status.RUNNING, "alive@test", 1)
    assert (parts[1].status, parts[1].worker, parts[1].attempts) == (JobPart.Status.DONE, "other@test", 2)
    assert (parts[2].status, parts[2].worker, parts[2].attempts) == (JobPart.Status.RUNNING, "", 1)


def fleet_samples() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in FleetCollector().collect()
        for s in family.samples
    }


def test_the_jobs_pool_is_measured_by_queue(account: dict[str, Any], book: Path) -> None:
    depth = ("svcx_queue_depth", (("queue", "jobs"),))
    before = fleet_samples()
    create(account, book)
    running = create(account, book, pages=[1, 2, 3])
    Job.objects.filter(pk=running.pk).update(status=Job.Status.RUNNING, pages_completed=1)

    samples = fleet_samples()

    assert samples[("svcx_v2_jobs", (("queue", "jobs"), ("status", "queued")))] == 1
    assert samples[("svcx_v2_jobs", (("queue", "jobs"), ("status", "running")))] == 1
    assert samples[("svcx_v2_job_pages_pending", (("queue", "jobs"),))] == 14 + 2
    assert samples[("svcx_v2_job_oldest_queued_seconds", (("queue", "jobs"),))] >= 0
    assert samples[depth] - before[depth] == 2 + 5 + 1  # the leads and part tasks waiting
    assert samples[("svcx_v2_jobs", (("queue", "jobs_test"), ("status", "queued")))] == 0


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from running(Receiver())


def test_each_end_of_a_job_is_a_signed_webhook_event_with_the_job(
    account: dict[str, Any], book: Path, receiver: Receiver
) -> None:
    minted = webhook_endpoint_create(
        organization=account["org"], url=receiver.url, events=["job.succeeded", "job.failed", "job.canceled"]
    )
    succeeded = create(account, book, webhook_metadata={"batch": 7})
    async_job_lead(job_id=succeeded.id)
    canceled = async_job_cancel(job=create(account, book, pages=[1]))
    failed = create(account, book, pages=[2])
    store(Store.ASYNC).delete(failed.source_key)
    async_job_lead(job_id=failed.id)

    for delivery in WebhookDelivery.objects.filter(endpoint=minted.endpoint).order_by("event__created_at"):
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        webhook_delivery_attempt(delivery_id=delivery.pk)

    events = [verify(got.body, got.headers["svcx-signature"], minted.secret) for got in receiver.wait_for(3)]
    assert [(e["type"], e["data"]["id"], e["data"]["status"]) for e in events] == [
        ("job.succeeded", succeeded.id, "succeeded"),
        ("job.canceled", canceled.id, "canceled"),
        ("job.failed", failed.id, "failed"),
    ]
    assert events[0]["data"]["webhook_metadata"] == {"batch": 7}
    assert (events[0]["data"]["pages_completed"], events[0]["data"]["credits_billed"]) == (14, 14)
    assert events[2]["data"]["error"]["code"] == "internal_error"


@pytest.mark.parametrize(
    "outage",
    [
        OperationalError("server closed the connection unexpectedly"),
        redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
    ],
    ids=["database", "redis"],
)
def test_a_lead_stopped_by_an_outage_leaves_the_job_to_be_taken_over(
    account: dict[str, Any], book: Path, monkeypatch: pytest.MonkeyPatch, outage: Exception
) -> None:
    # PostgreSQL or Redis away is not the job's fault: it is neither failed (an internal_error
    # that bills nothing but loses the work) nor billed, and the next lead finishes it.
    job = create(account, book)

    def gone(*args: Any) -> None:
        raise outage

    monkeypatch.setattr(async_runner, "_lead", gone)
    async_job_lead(job_id=job.id)

    job.refresh_from_db()
    assert (job.status, job.lead_attempts, job.error) == (Job.Status.RUNNING, 1, None)
    assert movements(job) == [("hold", -14)]  # still held, for the lead that takes over
    monkeypatch.undo()
    Job.objects.filter(pk=job.pk).update(lead_heartbeat_at=timezone.now() - timedelta(seconds=10))
    async_job_lead(job_id=job.id)
    job.refresh_from_db()
    assert (job.status, job.lead_attempts) == (Job.Status.SUCCEEDED, 2)
    assert movements(job) == [("capture", -14), ("hold", -14)]

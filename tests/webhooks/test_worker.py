"""Webhooks through real Celery workers (with the beat's sweeper) on real PostgreSQL and Redis, to
a receiver on 127.0.0.1 started by the test: a delivery the SDK verifies, a receiver that fails
twice then answers, an endpoint failing for its whole window (disabled, its owners mailed), and a
worker killed in the middle of an attempt (another delivers the event: at least once).
The workers are tests.webhooks.workers': a webhooks queue of their own, retries within a second."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from svcx_client.webhooks import verify

from tests.conftest import WorkerProcess
from tests.webhooks.receiver import HANG, Receiver
from tests.webhooks.workers import module_worker, stop, webhooks_worker
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create, webhook_event_emit

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def hooks_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[WorkerProcess, str]]:
    yield from module_worker("hooks", django_db_blocker, tmp_path_factory)


@pytest.fixture
def worker(hooks_worker: tuple[WorkerProcess, str], settings: Any) -> WorkerProcess:
    """The module's worker; this process queues to its queue."""
    process, prefix = hooks_worker
    settings.SVCX_QUEUE_PREFIX = prefix
    return process


def wait_until(check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s")
        time.sleep(0.1)


def test_a_real_worker_delivers_a_signed_event_the_sdk_verifies(
    worker: WorkerProcess, acme: Any, receiver: Receiver
) -> None:
    minted = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.succeeded"])

    event = webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1", "pages_billed": 3})

    [got] = receiver.wait_for(1)
    assert verify(got.body, got.headers["svcx-signature"], minted.secret) == {
        "id": event.id,
        "type": "job.succeeded",
        "created": int(event.created_at.timestamp()),
        "data": {"id": "job_1", "pages_billed": 3},
    }
    assert (got.headers["svcx-event-id"], got.headers["user-agent"]) == (event.id, "svcx-webhooks/1.0")
    wait_until(lambda: WebhookDelivery.objects.get(event=event).status == "succeeded")
    attempt = WebhookAttempt.objects.get()
    assert (attempt.number, attempt.outcome, attempt.response_code, attempt.manual) == (1, "succeeded", 200, False)
    assert attempt.duration_ms is not None


def test_a_receiver_failing_twice_then_answering_gets_the_event_with_each_attempt_logged(
    worker: WorkerProcess, acme: Any, receiver: Receiver, settings: Any
) -> None:
    settings.SVCX_WEBHOOKS_RETRY_WINDOW = 120  # room for the retries on a busy machine
    receiver.answers = [500, 503]
    minted = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.failed"])

    event = webhook_event_emit(organization=acme, type="job.failed", data={"id": "job_2"})

    seen = receiver.wait_for(3)
    wait_until(lambda: WebhookDelivery.objects.get(event=event).status == "succeeded")
    assert [r.headers["svcx-delivery-attempt"] for r in seen] == ["1", "2", "3"]
    assert {json.loads(r.body)["id"] for r in seen} == {event.id}
    assert all(verify(r.body, r.headers["svcx-signature"], minted.secret) for r in seen)
    # Each retry waited for at least half of SVCX_WEBHOOKS_RETRY_FIRST (300 ms) after the failure.
    assert seen[1].at - seen[0].at >= 0.15
    assert seen[2].at - seen[1].at >= 0.15
    log = WebhookAttempt.objects.filter(delivery__event=event).order_by("number")
    assert [(a.number, a.outcome, a.response_code) for a in log] == [
        (1, "failed", 500),
        (2, "failed", 503),
        (3, "succeeded", 200),
    ]
    assert [a.next_attempt_at is not None for a in log] == [True, True, False]
    delivery = WebhookDelivery.objects.get(event=event)
    assert (delivery.attempts, delivery.last_response_code, delivery.next_attempt_at) == (3, 200, None)
    assert WebhookEndpoint.objects.get(pk=minted.endpoint.pk).enabled


def test_an_endpoint_failing_for_its_whole_window_is_disabled_and_its_owners_mailed(
    worker: WorkerProcess, acme: Any, receiver: Receiver, settings: Any
) -> None:
    settings.SVCX_WEBHOOKS_RETRY_WINDOW = 4  # as the worker's: retried for 4 seconds
    receiver.then = 503
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.canceled"]).endpoint

    event = webhook_event_emit(organization=acme, type="job.canceled", data={"id": "job_3"})

    wait_until(lambda: not WebhookEndpoint.objects.get(pk=endpoint.pk).enabled, timeout=40)
    endpoint.refresh_from_db()
    delivery = WebhookDelivery.objects.get(event=event)
    assert endpoint.disabled_reason == "an event could not be delivered for 4 seconds"
    assert delivery.status == "failed"
    assert delivery.attempts >= 3
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert all(a.response_code == 503 for a in attempts)
    # Each retry was due within the window (the last one at its end); after the last, none.
    assert all(a.next_attempt_at <= delivery.give_up_at for a in attempts[:-1])
    assert attempts[-1].next_attempt_at is None
    assert len(receiver.seen) == delivery.attempts
    # The mail (the console mail backend writes it to the worker's log) goes to the two owners.
    wait_until(lambda: "svcx: webhook endpoint" in worker.log.read_text(errors="replace"))
    mail = worker.log.read_text(errors="replace").split("Subject: svcx: webhook endpoint", 1)[1][:3000]
    to = next(line for line in worker.log.read_text(errors="replace").splitlines() if line.startswith("To: "))
    assert sorted(to.removeprefix("To: ").split(", ")) == ["olga@acme.test", "otto@acme.test"]
    assert "an event could not be delivered for 4 seconds" in mail
    # Disabled: the next event is not sent to it.
    webhook_event_emit(organization=acme, type="job.canceled", data={"id": "job_4"})
    time.sleep(1.5)
    assert len(receiver.seen) == delivery.attempts


def test_a_worker_killed_in_the_middle_of_an_attempt_leaves_the_event_to_another(
    acme: Any, receiver: Receiver, settings: Any, tmp_path: Path
) -> None:
    # Timeouts of 1 + 2 s: an attempt's lease ends 18 s after its claim (its time limit and a margin).
    prefix = f"hookskill{os.getpid()}-"
    timeouts = {"SVCX_WEBHOOKS_CONNECT_TIMEOUT": "1s", "SVCX_WEBHOOKS_READ_TIMEOUT": "2s"}
    settings.SVCX_QUEUE_PREFIX = prefix
    receiver.answers = [HANG]  # the first attempt hangs until its worker is killed
    endpoint = webhook_endpoint_create(organization=acme, url=receiver.url, events=["job.succeeded"]).endpoint
    first = webhooks_worker(tmp_path / "first", prefix, beat=False, **timeouts)
    try:
        event = webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_5"})
        receiver.wait_for(1)
        os.killpg(first.process.pid, signal.SIGKILL)  # the worker and its pool, mid-attempt
        first.process.wait()
    finally:
        first.stop()
    killed_at = time.time()
    claimed = WebhookDelivery.objects.get(event=event)
    assert (claimed.status, claimed.attempts) == ("pending", 1)
    assert not WebhookAttempt.objects.exists()  # the attempt died unrecorded

    second = webhooks_worker(tmp_path / "second", prefix, **timeouts)
    try:
        seen = receiver.wait_for(2, timeout=60)
        wait_until(lambda: WebhookDelivery.objects.get(event=event).status == "succeeded")
    finally:
        stop(second)

    assert [r.headers["svcx-event-id"] for r in seen] == [event.id, event.id]
    assert seen[1].headers["svcx-delivery-attempt"] == "2"
    assert seen[1].at >= killed_at  # sent again only once the lost attempt's lease ran out
    assert seen[1].at - seen[0].at >= 15
    assert [(a.number, a.outcome) for a in WebhookAttempt.objects.all()] == [(2, "succeeded")]
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).enabled

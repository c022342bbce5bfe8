"""Version 2 jobs ending while their webhook receiver is out of order (issue 26's fault, shortened:
20 s of 500s then refused connections, retries from 1 s), on a real worker of the jobs and webhooks
queues with the beat's sweepers, and a real receiver on 127.0.0.1: every event arrives signed soon
after the receiver is back, each job ends with its money right, and the endpoint stays enabled.
The fault suite runs the full 10 minutes (`python -m bench faults --only job_webhook_receiver_down`)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from svcx_client.webhooks import verify

from conversion import engine
from conversion.async_jobs import async_job_cancel, job_result_bytes
from conversion.models import Job
from conversion.store import Store, store
from tests.conftest import start_worker
from tests.conversion.test_async_jobs import JOB_ENV, account, book, create, job_settings, movements, wait_ended
from tests.webhooks.receiver import Receiver, started
from tests.webhooks.workers import stop
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_create

pytestmark = [pytest.mark.django_db(transaction=True)]
__all__ = ["account", "book", "job_settings"]  # fixtures

OUTAGE_S = 20.0  # half of it answering 500, half refusing connections
RETRIES = {
    # The service's schedule (each wait a quarter of the event's age, jitter), from 1 s, not 30 s.
    "SVCX_WEBHOOKS_RETRY_FIRST": "1s",
    "SVCX_WEBHOOKS_SWEEP_INTERVAL": "1s",
    "SVCX_WEBHOOKS_CONNECT_TIMEOUT": "1s",
    "SVCX_WEBHOOKS_READ_TIMEOUT": "2s",
}
# After the recovery every event arrives within a quarter of the outage (docs/webhooks.md), plus a
# sweep and the time to queue and send it on a busy machine (s).
RECOVERY_SLACK_S = 5.0


def test_events_of_jobs_ended_in_a_receiver_outage_arrive_signed_soon_after_it_and_the_endpoint_stays_enabled(
    account: dict[str, Any], book: Path, settings: Any, tmp_path: Path
) -> None:
    prefix = f"hookjobs{os.getpid()}-"
    settings.SVCX_QUEUE_PREFIX = prefix
    receiver = Receiver(then=500)
    server, _ = started(receiver)
    port = server.server_port
    minted = webhook_endpoint_create(
        organization=account["org"], url=receiver.url, events=["job.succeeded", "job.failed", "job.canceled"]
    )
    outage_started = time.monotonic()
    succeeded = create(account, book)
    canceled = async_job_cancel(job=create(account, book, pages=[1, 2]))
    failed = create(account, book, pages=[3])
    store(Store.ASYNC).delete(failed.source_key)  # before any worker runs: its lead finds no PDF
    worker = start_worker(
        tmp_path,
        queues=f"{prefix}jobs,{prefix}webhooks",
        env={"SVCX_QUEUE_PREFIX": prefix, **JOB_ENV, **RETRIES},
        beat=True,
        concurrency=2,
    )
    try:
        succeeded, failed = wait_ended(succeeded), wait_ended(failed)
        time.sleep(max(0.0, outage_started + OUTAGE_S / 2 - time.monotonic()))
        server.shutdown()
        server.server_close()  # connections refused from now on
        time.sleep(max(0.0, outage_started + OUTAGE_S - time.monotonic()))
        receiver.then = 200
        server, _ = started(receiver, port=port)
        recovered = time.time()
        deadline = time.monotonic() + OUTAGE_S / 4 + RECOVERY_SLACK_S + 30
        while len({r.headers["svcx-event-id"] for r in receiver.seen if r.at >= recovered}) < 3:
            assert time.monotonic() < deadline, "not every event arrived after the recovery"
            time.sleep(0.1)
        # The worker records an attempt after its answer came: let it, before it is stopped.
        while WebhookDelivery.objects.exclude(status=WebhookDelivery.Status.SUCCEEDED).exists():
            assert time.monotonic() < deadline + 10, "an answered delivery was not recorded"
            time.sleep(0.1)
    finally:
        stop(worker)
        receiver.released.set()
        server.shutdown()
        server.server_close()

    # Each job ended as it was meant to, its money right.
    assert (succeeded.status, failed.status, canceled.status) == ("succeeded", "failed", "canceled")
    assert json.loads(job_result_bytes(job=succeeded))["markdown"] == engine.convert(book).markdown
    assert movements(succeeded) == [("capture", -14), ("hold", -14)]
    assert movements(failed) == [("hold", -1), ("release", 1)]
    assert movements(canceled) == [("hold", -2), ("release", 2)]
    # Every event delivered, signed: the SDK verifies each request the receiver got.
    events = {
        r.headers["svcx-event-id"]: verify(r.body, r.headers["svcx-signature"], minted.secret) for r in receiver.seen
    }
    assert sorted((e["type"], e["data"]["id"]) for e in events.values()) == sorted(
        [("job.succeeded", succeeded.id), ("job.failed", failed.id), ("job.canceled", canceled.id)]
    )
    # Soon after the recovery: each event's first request after it within a quarter of the outage.
    firsts = [min(r.at for r in receiver.seen if r.at >= recovered and r.headers["svcx-event-id"] == e) for e in events]
    assert max(firsts) - recovered <= OUTAGE_S / 4 + RECOVERY_SLACK_S, max(firsts) - recovered
    # The outage was both kinds of failure, and ten such attempts do not disable the endpoint.
    outcomes = set(WebhookAttempt.objects.values_list("response_code", "error"))
    assert (500, "") in outcomes
    assert (None, "connection refused") in outcomes
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {WebhookDelivery.Status.SUCCEEDED}
    endpoint = WebhookEndpoint.objects.get(pk=minted.endpoint.pk)
    assert (endpoint.enabled, endpoint.failed_events, endpoint.disabled_reason) == (True, 0, "")
    assert Job.objects.count() == 3

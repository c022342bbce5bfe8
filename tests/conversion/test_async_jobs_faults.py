"""Version 2 jobs through faults, on real workers: the lead's worker killed mid-job (SIGKILL):
another takes it over from the parts kept as soon as the killed worker stops announcing itself,
and the credits are captured once; the broker losing the queued part tasks: the sweeper sends
them again, and another worker parses parts beside the lead."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from conversion import engine
from conversion.async_jobs import PART_TASK, job_result_bytes
from conversion.async_runner import async_jobs_sweep
from conversion.models import Job, JobPart
from core.redis import redis_client
from tests.conftest import WorkerProcess, start_worker
from tests.conversion.engine.pdfs import make_pdf
from tests.conversion.test_async_jobs import (
    JOB_ENV,
    JOB_QUEUES,
    account,
    book_page,
    create,
    job_settings,
    movements,
    wait_ended,
)

pytestmark = [pytest.mark.django_db(transaction=True)]
__all__ = ["account", "job_settings"]  # fixtures


# Lost work is taken back after SVCX_JOB_LOST_AFTER without a beat, or after the heartbeat's TTL
# once its worker stopped announcing itself: the killed worker's is taken back by the second rule.
GONE_ENV = {**JOB_ENV, "SVCX_JOB_LOST_AFTER": "120s", "SVCX_WORKER_HEARTBEAT_TTL": "3s"}


def test_a_lead_killed_mid_job_is_taken_over_once_its_worker_is_gone_and_nothing_is_billed_twice(
    account: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = make_pdf(tmp_path / "long.pdf", [book_page(n, rows=40) for n in range(1, 61)])
    first = start_worker(tmp_path / "a", queues=JOB_QUEUES, env=GONE_ENV)
    job = create(account, path)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job.refresh_from_db()
            if job.pages_parsed >= 9:
                break
            time.sleep(0.02)
        assert job.status == Job.Status.RUNNING
        os.killpg(first.process.pid, signal.SIGKILL)
        killed = timezone.now()
    finally:
        first.stop()
    second = start_worker(tmp_path / "b", queues=JOB_QUEUES, env=GONE_ENV, beat=True)
    try:
        job = wait_ended(job, timeout=120)
    finally:
        second.stop()

    assert job.status == Job.Status.SUCCEEDED, job.error
    assert (job.lead_attempts, job.lead_worker) == (2, second.hostname)
    # Taken over well before SVCX_JOB_LOST_AFTER (120 s) had passed since the last beat.
    assert (job.finished_at - killed).total_seconds() < 60
    assert json.loads(job_result_bytes(job=job))["markdown"] == engine.convert(path).markdown
    assert movements(job) == [("capture", -60), ("hold", -60)]


def test_part_tasks_the_broker_lost_are_sent_again_and_another_worker_parses_parts_beside_the_lead(
    account: dict[str, Any], tmp_path: Path, settings: Any
) -> None:
    prefix = f"lostparts{os.getpid()}-"
    settings.SVCX_QUEUE_PREFIX = prefix
    queue = prefix + "jobs"
    # Long enough that the lead, parsing parts itself from its start, is still at work when the
    # second worker has started (about 2 s; on a quiet machine the lead parses 45 pages in less).
    path = make_pdf(tmp_path / "long.pdf", [book_page(n, rows=40) for n in range(1, 121)])
    job = create(account, path)  # a lead and 40 parts, no worker yet
    # The broker loses the part tasks (a Redis restarted without its data); the lead's is left.
    client = redis_client()
    for message in client.lrange(queue, 0, -1):
        if json.loads(message)["headers"]["task"] == PART_TASK:
            client.lrem(queue, 1, message)
    assert client.llen(queue) == 1
    settings.SVCX_JOB_RESEND_AFTER = 1
    time.sleep(1.1)
    async_jobs_sweep()  # sends the lost part tasks again
    assert client.llen(queue) > 1
    env = {**JOB_ENV, "SVCX_QUEUE_PREFIX": prefix}
    workers: list[WorkerProcess] = []
    try:
        for name in ("a", "b"):  # the first to start takes the lead
            (tmp_path / name).mkdir()
            workers.append(start_worker(tmp_path / name, queues=queue, env=env))
        # The beat's sweeper, run here on this test's queue (the beat sends it to the default queue).
        deadline = time.monotonic() + 120
        while job.status not in Job.ENDED:
            assert time.monotonic() < deadline, f"job still {job.status}"
            async_jobs_sweep()
            time.sleep(1)
            job.refresh_from_db()
    finally:
        for worker in workers:
            worker.stop()

    assert job.status == Job.Status.SUCCEEDED, job.error
    assert json.loads(job_result_bytes(job=job))["markdown"] == engine.convert(path).markdown
    assert movements(job) == [("capture", -120), ("hold", -120)]
    # Without the tasks sent again, the lead would have parsed every part on its own worker.
    parsed_by = dict(JobPart.objects.filter(job=job).values_list("index", "worker"))
    others = sorted(index for index, worker in parsed_by.items() if worker != job.lead_worker)
    assert job.lead_worker in {w.hostname for w in workers}
    assert others, parsed_by
    assert set(parsed_by.values()) == {w.hostname for w in workers}

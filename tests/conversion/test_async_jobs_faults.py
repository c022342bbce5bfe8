"""A version 2 job whose lead's worker is killed mid-job (SIGKILL, real workers): another
worker takes it over from the parts kept, and the credits are captured once."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from conversion import engine
from conversion.async_jobs import job_result_bytes
from conversion.models import Job
from tests.conftest import start_worker
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


def test_a_lead_killed_mid_job_is_taken_over_and_nothing_is_billed_twice(
    account: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = make_pdf(tmp_path / "long.pdf", [book_page(n, rows=40) for n in range(1, 91)])
    first = start_worker(tmp_path / "a", queues=JOB_QUEUES, env=JOB_ENV)
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
    finally:
        first.stop()
    second = start_worker(tmp_path / "b", queues=JOB_QUEUES, env=JOB_ENV, beat=True)
    try:
        job = wait_ended(job, timeout=120)
    finally:
        second.stop()

    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.lead_attempts == 2
    assert json.loads(job_result_bytes(job=job))["markdown"] == engine.convert(path).markdown
    assert movements(job) == [("capture", -90), ("hold", -90)]

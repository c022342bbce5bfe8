"""Celery tasks of conversion (found by autodiscovery). Each takes plain values, calls one
service, and is safe to run twice. The web side queues a job by the task's name
(`conversion.jobs.CONVERT_TASK`), so that it need not import the runner."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from conversion.async_jobs import LEAD_TASK, PART_TASK
from conversion.async_runner import async_job_lead, async_job_part, async_jobs_sweep
from conversion.files import figure_files_sweep, files_purge_expired
from conversion.jobs import CONVERT_TASK
from conversion.maintenance import conversion_housekeeping, job_inputs_sweep
from conversion.metrics import job_observe
from conversion.runner import job_run, job_time_limit_hit
from workers.memory import heap_suspect


@shared_task(
    name=CONVERT_TASK,
    ignore_result=True,
    acks_late=True,
    # The engine stops itself at the wall-clock limit; these are the backstops.
    soft_time_limit=settings.SVCX_CONVERSION_TIME_LIMIT + 10,
    time_limit=settings.SVCX_CONVERSION_TIME_LIMIT + 30,
)
def convert_task(request_id: str, sealed_password: bool = False) -> None:
    """Run one job. The message holds no secret: a password waits sealed in Redis (conversion.sealing)."""
    try:
        job_run(request_id=request_id, sealed_password=sealed_password)
    except SoftTimeLimitExceeded:
        job_time_limit_hit(request_id=request_id)
    job_observe(request_id=request_id)
    if heap_suspect():
        # The job ran out of memory (its answer is given): the pool reports this task done,
        # then replaces the process with a fresh one (billiard leaves on a job's SystemExit).
        raise SystemExit("worker process replaced after running out of memory")


@shared_task(name="conversion.housekeeping", ignore_result=True)
def housekeeping_task() -> None:
    """Drop expired cached results and idempotency bodies."""
    conversion_housekeeping()


@shared_task(name="conversion.files_purge", ignore_result=True)
def files_purge_task() -> int:
    """Delete the bytes of stored files past their retention window, and the figures left pending
    by conversions that died (conversion.files.figure_files_sweep)."""
    return files_purge_expired() + figure_files_sweep()


@shared_task(name="conversion.inputs_sweep", ignore_result=True)
def inputs_sweep_task() -> int:
    """Delete job uploads that outlived their job in the store (both its processes died)."""
    return job_inputs_sweep()


@shared_task(name=LEAD_TASK, ignore_result=True, acks_late=True, bind=True)
def job_lead_task(self: Task[Any, Any], job_id: str) -> None:
    """Lead a version 2 job: its pages rendered in order, its result kept and billed. The
    worker's name goes with the claim: its heartbeat tells whether it is still there."""
    async_job_lead(job_id=job_id, worker=self.request.hostname or "")


@shared_task(name=PART_TASK, ignore_result=True, acks_late=True, bind=True)
def job_part_task(self: Task[Any, Any], job_id: str, index: int) -> None:
    """Parse one part of a version 2 job (claimed in the worker's name, as a lead)."""
    async_job_part(job_id=job_id, index=index, worker=self.request.hostname or "")


@shared_task(name="conversion.jobs_sweep", ignore_result=True)
def jobs_sweep_task() -> dict[str, int]:
    """Lost parts and leads of version 2 jobs to other workers; jobs past their limits."""
    return async_jobs_sweep()

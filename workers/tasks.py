"""Celery tasks. Each takes plain values, calls one service, and is safe to run twice."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from billing.ledger import captures_reconcile, holds_sweep
from billing.usage import usage_copy
from conversion.files import files_purge_expired
from conversion.maintenance import conversion_housekeeping
from conversion.runner import job_run, job_time_limit_hit
from workers.metrics import job_observe


@shared_task(name="billing.holds_sweep", ignore_result=True)
def holds_sweep_task() -> int:
    """Release holds whose request died (lease lapsed), and refund captures that never
    reached a 200."""
    return holds_sweep() + captures_reconcile()


@shared_task(name="billing.usage_copy", ignore_result=True)
def usage_copy_task() -> int:
    """Bring the usage reporting copy up to date with the request log."""
    return usage_copy()


@shared_task(
    name="conversion.convert",
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


@shared_task(name="conversion.housekeeping", ignore_result=True)
def housekeeping_task() -> None:
    """Drop expired cached results and idempotency bodies."""
    conversion_housekeeping()


@shared_task(name="conversion.files_purge", ignore_result=True)
def files_purge_task() -> int:
    """Delete the bytes of stored files past their retention window."""
    return files_purge_expired()

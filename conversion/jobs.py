"""The job machinery of the web side: the result cache, the queues and their overload checks,
waiting for a job without holding a process per waiting request, and giving a job up. It moves
no money and counts no meter: the steps of a conversion, and their billing, are
conversion.services."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import redis
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from accounts.authentication import Caller
from conversion.engine import ENGINES
from conversion.models import CachedResult, ConversionJob
from conversion.options import Options
from conversion.sealing import password_discard
from conversion.store import job_input_discard
from core.errors import ErrorCode, ServiceError
from core.redis import redis_client
from workers.heartbeat import live_workers

# The Celery task that runs a job (conversion/tasks.py), queued by name.
CONVERT_TASK = "conversion.convert"

logger = logging.getLogger("svcx.conversion")
CACHE_LIFETIME = timedelta(hours=24)
CONVERT_PAGE_LIMIT = 200
TEST_KEY_PAGE_LIMIT = 5


def result_cache_key(*, caller: Caller, sha256: str, options: Options, password: str | None) -> str:
    """Organization, environment, content, normalised options, engine version, and whether (and
    with which password) an encrypted file was opened: a result never reaches a request that
    could not have produced it."""
    opened_with = hashlib.sha256(f"{sha256}:{password}".encode()).hexdigest() if password else ""
    version = ENGINES[options.engine_id]
    raw = "|".join([caller.org_id, caller.environment, sha256, options.cache_key(), version, opened_with])
    return hashlib.sha256(raw.encode()).hexdigest()


def cached_result_get(*, key: str) -> CachedResult | None:
    return CachedResult.objects.filter(key=key, created_at__gt=timezone.now() - CACHE_LIFETIME).order_by().first()


def conversion_queues() -> tuple[str, str]:
    """The live and the test conversion queue. Test keys run on their own workers
    (interface.md 5.3.2: separate infrastructure)."""
    return settings.SVCX_QUEUE_PREFIX + "convert", settings.SVCX_QUEUE_PREFIX + "convert_test"


def queue_for(caller: Caller) -> str:
    live, test = conversion_queues()
    return test if caller.is_test else live


def queue_depth(queue: str) -> int:
    client = redis_client()
    if client is not None:
        return int(client.llen(queue))
    folder = Path(str(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]))
    return sum(1 for _ in folder.glob("*.msg")) if folder.is_dir() else 0


def fleet_check(queue: str) -> None:
    """503 `overloaded` when no live worker consumes the queue or it is deeper than allowed."""
    retry_ms = int(float(settings.SVCX_OVERLOAD_RETRY_AFTER) * 1000)
    if not live_workers(queue):
        raise ServiceError(
            ErrorCode.OVERLOADED,
            "No conversion worker is available right now; retry after Retry-After.",
            retry_after_ms=retry_ms,
            details={"reason": "no_live_workers"},
        )
    depth = queue_depth(queue)
    if depth >= int(settings.SVCX_QUEUE_MAX_DEPTH):
        raise ServiceError(
            ErrorCode.OVERLOADED,
            "The conversion fleet is saturated; retry after Retry-After.",
            retry_after_ms=retry_ms,
            details={"reason": "queue_full", "queue_depth": depth},
        )


def job_inputs_discard(*, job: ConversionJob) -> None:
    """Delete the job's upload from the store and its sealed password: safe to call twice, by
    the web side and by the worker, whichever is left when the job ends. Never raises: a store or
    Redis fault must not fail a finished job; the password's time-to-live and housekeeping's
    sweep of old jobs delete what is left."""
    try:
        password_discard(request_id=job.request_id)
    except SoftTimeLimitExceeded:
        raise  # the worker's time limit, not a fault of the store: its task answers it
    except Exception:
        logger.warning("job password not discarded", exc_info=True, extra={"request_id": job.request_id})
    try:
        job_input_discard(job.source_store, job.source_key)
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.warning("job upload not deleted", exc_info=True, extra={"request_id": job.request_id})


def broker_unavailable() -> ServiceError:
    """503 `service_unavailable`: Redis (broker, job notifications, meters) cannot be reached."""
    return ServiceError(ErrorCode.SERVICE_UNAVAILABLE, retry_after_ms=5000, details={"checks": {"redis": "down"}})


# Polling the job row: on the embedded default, and while Redis fails (every request polls then,
# so more slowly).
POLL_SECONDS = 0.05
REDIS_DOWN_POLL_SECONDS = 0.25
REDIS_RETRY_SECONDS = 2.0
# The waiting web thread marks the job watched this often; a job unwatched for WAITER_LOST_AFTER
# lost its request (the web process died) and the worker gives it up, releasing its hold.
WAITER_BEAT_SECONDS = 2.0
WAITER_LOST_AFTER = timedelta(seconds=10)


def _done_key(request_id: str) -> str:
    return f"svcx:job:{request_id}:done"


def job_notify_done(*, request_id: str) -> None:
    """Wake the web thread waiting for the job. Best effort: the job row already holds the
    outcome, and a waiter that cannot hear Redis polls that row."""
    client = redis_client()
    if client is None:
        return
    try:
        pipe = client.pipeline()
        pipe.rpush(_done_key(request_id), 1)
        pipe.expire(_done_key(request_id), 300)
        pipe.execute()
    except redis.RedisError:
        logger.warning("job notification failed", exc_info=True, extra={"request_id": request_id})


def job_wait(*, request_id: str, is_client_gone: Callable[[], bool]) -> ConversionJob:
    """Block this thread until the job finishes, the client leaves or the wait limit passes.

    With Redis the wait is a BLPOP woken by the worker; without, or while Redis fails, a poll
    of the job row (Redis is tried again every REDIS_RETRY_SECONDS).
    Raises 503 `overloaded` when the job never started, 500 `internal_error` when its worker was
    lost, 504 `conversion_timeout` when it ran past the wall-clock limit; in these cases, and when
    the client left (400), the job is abandoned here, and the caller releases what it holds.
    """
    client = redis_client()
    started = time.monotonic()
    queue_limit = float(settings.SVCX_QUEUE_WAIT_LIMIT)
    run_limit = float(settings.SVCX_CONVERSION_TIME_LIMIT) + float(settings.SVCX_CONVERSION_GRACE)
    redis_down_until = 0.0
    watched = time.monotonic()
    while True:
        if time.monotonic() - watched >= WAITER_BEAT_SECONDS:
            watched = time.monotonic()
            ConversionJob.objects.filter(
                pk=request_id, status__in=[ConversionJob.Status.QUEUED, ConversionJob.Status.RUNNING]
            ).update(waiter_seen_at=timezone.now())
        if client is not None and time.monotonic() >= redis_down_until:
            try:
                client.blpop([_done_key(request_id)], timeout=1)
            except redis.RedisError:
                logger.warning("job wait falls back to polling", exc_info=True, extra={"request_id": request_id})
                redis_down_until = time.monotonic() + REDIS_RETRY_SECONDS
        else:
            time.sleep(POLL_SECONDS if client is None else REDIS_DOWN_POLL_SECONDS)
        job = ConversionJob.objects.get(pk=request_id)
        if job.status in (ConversionJob.Status.SUCCEEDED, ConversionJob.Status.FAILED):
            return job
        if is_client_gone():
            job_abandon(request_id=request_id)
            raise ServiceError(ErrorCode.BAD_REQUEST, "The client closed the connection.")
        waited = time.monotonic() - started
        if job.status == ConversionJob.Status.QUEUED and waited > queue_limit:
            if job_abandon(request_id=request_id):
                raise ServiceError(
                    ErrorCode.OVERLOADED,
                    "The conversion did not start in time: the fleet is saturated. Retry after Retry-After.",
                    retry_after_ms=int(float(settings.SVCX_OVERLOAD_RETRY_AFTER) * 1000),
                    details={"reason": "queue_wait"},
                )
        elif job.heartbeat_at is not None and (timezone.now() - job.heartbeat_at).total_seconds() > float(
            settings.SVCX_WORKER_LOST_AFTER
        ):
            if job_abandon(request_id=request_id):
                logger.error("conversion worker lost", extra={"request_id": request_id})
                raise ServiceError(
                    ErrorCode.INTERNAL_ERROR,
                    "The worker running the conversion was lost. Nothing was billed; retry the request.",
                    details={"pages_completed": job.pages_completed},
                )
        elif (
            job.started_at is not None
            and (timezone.now() - job.started_at).total_seconds() > run_limit
            and job_abandon(request_id=request_id)
        ):
            raise ServiceError(
                ErrorCode.CONVERSION_TIMEOUT,
                "The conversion exceeded its wall-clock limit.",
                details={
                    "pages_completed": job.pages_completed,
                    "time_limit_seconds": int(settings.SVCX_CONVERSION_TIME_LIMIT),
                },
            )


def job_abandon(*, request_id: str) -> bool:
    """Mark the job abandoned unless it already finished; True when it was abandoned now."""
    return bool(
        ConversionJob.objects.filter(
            pk=request_id, status__in=[ConversionJob.Status.QUEUED, ConversionJob.Status.RUNNING]
        ).update(status=ConversionJob.Status.ABANDONED, finished_at=timezone.now())
    )


def job_abandon_unwatched(*, request_id: str) -> bool:
    """Abandon the job when no web thread has marked it watched for WAITER_LOST_AFTER (its
    request died with its web process); True when it was abandoned now."""
    return bool(
        ConversionJob.objects.filter(
            pk=request_id,
            status__in=[ConversionJob.Status.QUEUED, ConversionJob.Status.RUNNING],
            waiter_seen_at__lt=timezone.now() - WAITER_LOST_AFTER,
        ).update(status=ConversionJob.Status.ABANDONED, finished_at=timezone.now())
    )

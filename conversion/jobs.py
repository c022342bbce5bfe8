"""The web side of a conversion: the result cache, overload checks, submitting a job to the
workers and waiting for it without holding a process per waiting request."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import redis
from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from accounts.authentication import Caller
from accounts.keyformat import Environment
from billing.ledger import credits_capture, credits_release
from billing.limits import MeterName
from billing.meters import meter_consume, meter_require
from billing.models import CreditHold
from conversion.engine import ENGINE_VERSION
from conversion.models import CachedResult, ConversionJob
from conversion.options import Options
from conversion.sealing import password_discard, password_seal
from conversion.share import pool_share
from conversion.store import Source, Store, job_input_discard, job_input_key, object_put
from core.context import Usage, context_of
from core.edge import client_gone
from core.errors import ErrorCode, ServiceError
from core.handlers import request_id_of
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
    raw = "|".join([caller.org_id, caller.environment, sha256, options.cache_key(), ENGINE_VERSION, opened_with])
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


def job_submit(
    *,
    caller: Caller,
    request_id: str,
    kind: str = ConversionJob.Kind.CONVERT,
    source: Source,
    password: str | None,
    options: Options | None = None,
    cache_key: str = "",
    debug: bool = False,
) -> ConversionJob:
    """Record the job and queue it (after commit) on the caller's environment's queue.

    All PDF work runs on the workers, never in a web thread: a slow document cannot stall
    the other requests a web process is holding. The worker fetches the PDF from the store by
    key: an upload is put there first (deleted when the job ends); a stored file is already
    there. The password is sealed for the worker, never put in the message."""
    queue = queue_for(caller)
    fleet_check(queue)
    if source.path is not None:
        alias, key = Store.JOBS, object_put(Store.JOBS, job_input_key(request_id), source.path)
    else:
        alias, key = Store.FILES, source.key
    job = ConversionJob(
        request_id=request_id,
        kind=kind,
        organization=caller.organization,
        environment=caller.environment,
        api_key_id=caller.key_id,
        source_store=alias,
        source_key=key,
        sha256=source.sha256,
        options={
            "pages": options.pages,
            "tables": options.tables,
            "fallback": options.fallback,
            "flavor": options.flavor,
            "pages_param": options.pages_param,
        }
        if options is not None
        else {},
        cache_key=cache_key,
        max_pages=TEST_KEY_PAGE_LIMIT if caller.is_test else CONVERT_PAGE_LIMIT,
        debug=debug,
        waiter_seen_at=timezone.now(),
    )
    try:
        if password is not None:
            password_seal(request_id=request_id, password=password)
        job.save(force_insert=True)
    except BaseException:
        job_inputs_discard(job=job)
        raise
    sealed = password is not None

    def publish() -> None:
        try:
            current_app.send_task(CONVERT_TASK, args=(request_id, sealed), queue=queue)
        except Exception as exc:
            # The broker is unreachable (kombu gave up its publish retries): nothing will run
            # the job, so it is abandoned and the client told to come back.
            _abandon(request_id)
            job_inputs_discard(job=job)
            logger.error("job publish failed", exc_info=exc, extra={"request_id": request_id})
            raise broker_unavailable() from exc

    transaction.on_commit(publish)
    return job


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
    Raises 503 `overloaded` when the job never started, 504 `conversion_timeout` when it ran past
    the wall-clock limit; in both cases, and when the client left, the job is abandoned.
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
            _abandon(request_id)
            raise ServiceError(ErrorCode.BAD_REQUEST, "The client closed the connection.")
        waited = time.monotonic() - started
        if job.status == ConversionJob.Status.QUEUED and waited > queue_limit:
            if _abandon(request_id):
                raise ServiceError(
                    ErrorCode.OVERLOADED,
                    "The conversion did not start in time: the fleet is saturated. Retry after Retry-After.",
                    retry_after_ms=int(float(settings.SVCX_OVERLOAD_RETRY_AFTER) * 1000),
                    details={"reason": "queue_wait"},
                )
        elif job.heartbeat_at is not None and (timezone.now() - job.heartbeat_at).total_seconds() > float(
            settings.SVCX_WORKER_LOST_AFTER
        ):
            if _abandon(request_id):
                credits_release(request_id=request_id)
                logger.error("conversion worker lost", extra={"request_id": request_id})
                raise ServiceError(
                    ErrorCode.INTERNAL_ERROR,
                    "The worker running the conversion was lost. Nothing was billed; retry the request.",
                    details={"pages_completed": job.pages_completed},
                )
        elif (
            job.started_at is not None
            and (timezone.now() - job.started_at).total_seconds() > run_limit
            and _abandon(request_id)
        ):
            credits_release(request_id=request_id)
            raise ServiceError(
                ErrorCode.CONVERSION_TIMEOUT,
                "The conversion exceeded its wall-clock limit.",
                details={
                    "pages_completed": job.pages_completed,
                    "time_limit_seconds": int(settings.SVCX_CONVERSION_TIME_LIMIT),
                },
            )


def _abandon(request_id: str) -> bool:
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


def job_execute(
    *, raw: HttpRequest, caller: Caller, meters: tuple[MeterName, ...] = (), **submit: Any
) -> ConversionJob:
    """Submit a job for this request, wait for it, and return it; its error is raised as the
    request's error. The job holds one of its organization's slots of the worker pool
    (conversion.share) from before its submission until its work is counted; `meters` are
    required once it has one, right before the work starts."""
    request_id = request_id_of(raw)
    with pool_share(
        queue=queue_for(caller), caller=caller, request_id=request_id, is_client_gone=lambda: client_gone(raw)
    ):
        work_require(caller, *meters)
        submitted = job_submit(caller=caller, request_id=request_id, **submit)
        try:
            job = job_wait(request_id=request_id, is_client_gone=lambda: client_gone(raw))
        except ServiceError:
            raise
        except Exception:
            # The wait itself failed (the database went away): the request answers an error, so
            # whatever the job holds goes back, as far as the database lets us now (else the hold's
            # lease lapses and the sweeper returns it).
            with contextlib.suppress(Exception):
                _abandon(request_id)
                credits_release(request_id=request_id)
            raise
        finally:
            # The job has ended, or will never run (abandoned while queued): drop what it was given.
            job_inputs_discard(job=submitted)
        try:
            # Counted before the slot goes back: the organization's next job is measured with it.
            _account_work(caller, job)
        except redis.RedisError:
            # Approximate meters: a Redis fault after the work must not change the answer.
            logger.warning("work meters not counted", exc_info=True, extra={"request_id": request_id})
    if job.error:
        error = job.error
        raise ServiceError(
            ErrorCode(error["code"]),
            error.get("message"),
            param=error.get("param"),
            details=error.get("details") or {},
            retry_after_ms=error.get("retry_after_ms"),
            headers=error.get("headers") or {},
        )
    return job


NO_TEXT_CODES = (ErrorCode.DOCUMENT_HAS_NO_TEXT_LAYER, ErrorCode.PAGE_HAS_NO_TEXT_LAYER)


def job_deliver(*, raw: HttpRequest, job: ConversionJob) -> tuple[ConversionJob, dict[str, Any]]:
    """Bill a finished conversion as its 200 goes out: record the job's delivery and capture its
    hold in one transaction, then mark the request as captured, so that an error answer after
    this point refunds the capture (svcx.middleware, billing.ledger.capture_refund).

    Returns the job, with `pages_billed` and `credits_billed` set (both 0 when the hold's lease
    lapsed before the delivery: the sweeper returned it, nothing is billed), and the result's
    payload. A client that already left gets nothing and pays nothing: 400 `bad_request`. On
    every error raised here the hold is released.
    """
    try:
        result = CachedResult.objects.get(key=job.cache_key)
        if client_gone(raw):
            raise ServiceError(ErrorCode.BAD_REQUEST, "The client closed the connection.")
        _deliver(raw, job)
    except Exception:
        with contextlib.suppress(Exception):  # else the hold's lease lapses and the sweeper returns it
            credits_release(request_id=job.request_id)
        raise
    return job, result.payload


def _deliver(raw: HttpRequest, job: ConversionJob) -> None:
    with transaction.atomic():
        delivered = ConversionJob.objects.filter(
            pk=job.pk, status=ConversionJob.Status.SUCCEEDED, delivered_at=None
        ).update(delivered_at=timezone.now())
        if not delivered:
            raise ServiceError(
                ErrorCode.INTERNAL_ERROR, "The conversion's result was already delivered to another request."
            )
        credits = credits_capture(request_id=job.request_id, pages=job.pages_completed)
        captured = CreditHold.objects.filter(request_id=job.request_id, status=CreditHold.Status.CAPTURED).exists()
        job.pages_billed = job.pages_completed if captured else 0
        job.credits_billed = credits
        ConversionJob.objects.filter(pk=job.pk).update(pages_billed=job.pages_billed, credits_billed=credits)
    context_of(raw).usage = Usage(pages=job.pages_billed, credits=job.credits_billed, captured=captured)


def _account_work(caller: Caller, job: ConversionJob) -> None:
    """Count what the job cost against the meters of work that earned nothing: worker seconds
    of requests that billed zero, and conversions that produced no text."""
    # A conversion that succeeded bills on delivery (job_deliver), which follows.
    will_bill = job.status == ConversionJob.Status.SUCCEEDED and job.kind == ConversionJob.Kind.CONVERT
    will_bill = will_bill and job.environment != Environment.TEST and job.pages_completed > 0
    if job.started_at and job.finished_at and not job.credits_billed and not will_bill:
        seconds = math.ceil((job.finished_at - job.started_at).total_seconds())
        if seconds:
            meter_consume(caller, MeterName.UNBILLED_WORK, seconds, enforce=False)
    if job.kind == ConversionJob.Kind.CONVERT:
        code = (job.error or {}).get("code")
        if code in NO_TEXT_CODES or (job.result is not None and not job.result.get("text_chars")):
            meter_consume(caller, MeterName.NO_VALUE_CONVERSIONS, 1, enforce=False)


def work_require(caller: Caller, *meters: MeterName) -> None:
    """Refuse (429) before dispatch when a meter of work is already used up."""
    for name in meters:
        meter_require(caller, name)

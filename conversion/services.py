"""The conversion service: the steps of every conversion, and the one place of conversion where
credits move. POST /v1/convert calls the steps in this order and waits for its answer; a /v2 job
calls the same steps from its submission, its worker and its GET, with no request waiting.

1. Cache (`conversion_cache_lookup`): a result made for the same organization, environment, PDF,
   options, engine version and password is answered at once and bills nothing.
2. Meters (`conversion_meters_require`, `conversion_meters_charge`, `conversion_work_account`):
   a meter of work already used up refuses (429) before any work; the selected pages are counted
   once the worker knows them, before the hold; work that earned nothing is counted after it.
3. Submission (`conversion_submit`, then `conversion_hold` on the worker): the job is recorded and
   queued; its worker holds the credits of the selected pages as soon as the pre-flight has
   counted them (no PDF is read in a web thread), before it converts the first page.
4. Delivery (`job_execute`, `conversion_deliver`): a v1 request waits for its job, then collects
   the result and captures in one transaction with marking the job delivered.
5. Capture (`conversion_capture`): the pages converted are billed, the rest of the hold released.
6. Release and refund (`conversion_release`, `conversion_refund`).

The money rules:

- No page is billed that the client cannot fetch. A hold is captured only with a result the client
  gets: a v1 conversion as its 200 goes out, a v2 job once it succeeded and its result is stored
  for the GET that fetches it.
- Every other end releases the whole hold: an error, a cancel, a job given up (client gone, worker
  lost, over its limits). A hold nobody settles lapses with its lease, and billing's sweeper
  releases it.
- An answer that became an error after its capture (it failed to render or to be stored) is
  refunded; a capture whose request never logged a 200 (its process died) is refunded by
  billing's reconcile sweeper.
- Capture, release and refund take the request id alone, never an HTTP request: whichever side
  ends the job settles it. Each is idempotent (calling it again moves nothing), and the first
  settlement stands: a release after a capture, or a capture after a release, changes nothing.
- A test key bills 0 credits: its pages move through the monthly test allowance instead.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from celery import current_app
from django.db import transaction
from django.utils import timezone

from accounts.authentication import Caller
from accounts.keyformat import Environment
from accounts.models import Organization
from accounts.scopes import FILES_READ, FILES_WRITE
from billing.ledger import (
    CREDITS_PER_PAGE,
    Hold,
    capture_refund,
    credits_capture,
    credits_hold,
    credits_release,
    hold_renew,
    ocr_page_credits,
    page_credits,
)
from billing.limits import MeterName
from billing.meters import MeterState, Scope, meter_consume, meter_give_back, meter_require
from billing.selectors import capture_get
from conversion.figures import figure_file_ids
from conversion.files import figure_files_live
from conversion.jobs import (
    CONVERT_TASK,
    broker_unavailable,
    cached_result_get,
    fleet_check,
    job_abandon,
    job_inputs_discard,
    job_wait,
    queue_for,
    result_cache_key,
)
from conversion.models import CachedResult, ConversionJob
from conversion.options import Options, figures_options
from conversion.sealing import password_seal
from conversion.share import pool_share
from conversion.store import Source, Store, job_input_key, object_put
from core.errors import ErrorCode, ServiceError
from core.metrics import result_cache_count

logger = logging.getLogger("svcx.conversion")
# What the option `figures: "crop"` needs of a key beside `convert`.
FIGURE_SCOPES = (FILES_WRITE, FILES_READ)

CONVERT_PAGE_LIMIT = 200
TEST_KEY_PAGE_LIMIT = 5
# The meters of work a conversion is refused by (429) before it starts.
WORK_METERS = (MeterName.PAGES, MeterName.NEW_ACCOUNT, MeterName.NO_VALUE_CONVERSIONS, MeterName.UNBILLED_WORK)
NO_TEXT_CODES = (ErrorCode.DOCUMENT_HAS_NO_TEXT_LAYER, ErrorCode.PAGE_HAS_NO_TEXT_LAYER)


# --- 1. the cache ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CacheLookup:
    """The result cache's answer for a request: its key, and the result when there is one."""

    key: str
    result: CachedResult | None


def figures_scope_require(*, caller: Caller, options: Options) -> None:
    """Refuse `figures: "crop"` (403 `insufficient_scope`, before any work or billing) to a key
    without both `files:write` (it stores the pictures as files) and `files:read` (the ids it
    answers are only good to download)."""
    if options.figures != "crop":
        return
    missing = [scope for scope in FIGURE_SCOPES if scope not in caller.scopes]
    if missing:
        raise ServiceError(
            ErrorCode.INSUFFICIENT_SCOPE,
            f'`{options.figures_param}` "crop" stores each figure\'s picture as a file: it requires the scopes '
            f"{' and '.join(repr(s) for s in FIGURE_SCOPES)}; the key {caller.api_key.hint} lacks "
            f"{' and '.join(repr(s) for s in missing)}.",
            param=options.figures_param,
            details={"required_scope": missing[0], "key_scopes": sorted(caller.scopes)},
        )


def conversion_cache_lookup(*, caller: Caller, source: Source, options: Options, password: str | None) -> CacheLookup:
    """The cached result of this PDF, options and password for the caller's organization and
    environment, if one was made in the cache's lifetime by the current engine."""
    key = result_cache_key(caller=caller, sha256=source.sha256, options=options, password=password)
    result = cached_result_get(key=key)
    if result is not None and options.figures == "crop" and not _figures_live(caller, result):
        result = None  # converted again: the new result replaces this one
    result_cache_count(hit=result is not None)
    return CacheLookup(key=key, result=result)


def _figures_live(caller: Caller, result: CachedResult) -> bool:
    """Whether a result made with `figures: "crop"` can still be answered: each file it stored
    was not deleted and has not expired (a result never points at a file the client cannot
    download). A figure that never had a file (its page could not be rendered, the storage
    quota was full) leaves it fresh: the result is answered as it was made, its warning with it."""
    return figure_files_live(
        organization_id=caller.org_id, environment=caller.environment, file_ids=set(figure_file_ids(result.payload))
    )


# --- 2. the meters --------------------------------------------------------------------------


def conversion_meters_require(*, caller: Scope, meters: Sequence[MeterName] = WORK_METERS) -> None:
    """Refuse (429, the meter's code) when one of `meters` is already used up; counts nothing."""
    for name in meters:
        meter_require(caller, name)


def conversion_meters_charge(*, scope: Scope, pages: int) -> list[MeterState]:
    """Count the selected pages against the pages and new-account meters, before the hold;
    what was counted (for `conversion_meters_give_back`). Raises 429 when they would go past a
    limit (then neither meter keeps the count)."""
    charged = [meter_consume(scope, MeterName.PAGES, pages)]
    try:
        charged.append(meter_consume(scope, MeterName.NEW_ACCOUNT, pages))
    except BaseException:
        conversion_meters_give_back(scope=scope, charged=charged)
        raise
    return charged


def conversion_meters_give_back(*, scope: Scope, charged: Sequence[MeterState]) -> None:
    """Take back the pages `conversion_meters_charge` counted, for a conversion that did not
    start (its hold refused): a client out of credits keeps its page allowance. A failure here
    (Redis away) leaves the count, logged: it must not replace the error the client gets."""
    try:
        for state in charged:
            meter_give_back(scope, state)
    except Exception:
        logger.warning("page meters not given back", exc_info=True)


def conversion_work_account(*, scope: Scope, job: ConversionJob) -> None:
    """Count what a finished job cost against the meters of work that earned nothing: worker
    seconds of jobs that bill zero, and conversions that produced no text."""
    # A conversion that succeeded bills when it is delivered, which follows.
    will_bill = job.status == ConversionJob.Status.SUCCEEDED and job.kind == ConversionJob.Kind.CONVERT
    will_bill = will_bill and job.environment != Environment.TEST and job.pages_completed > 0
    if job.started_at and job.finished_at and not job.credits_billed and not will_bill:
        seconds = math.ceil((job.finished_at - job.started_at).total_seconds())
        if seconds:
            meter_consume(scope, MeterName.UNBILLED_WORK, seconds, enforce=False)
    if job.kind == ConversionJob.Kind.CONVERT:
        code = (job.error or {}).get("code")
        if code in NO_TEXT_CODES or (job.result is not None and not job.result.get("text_chars")):
            meter_consume(scope, MeterName.NO_VALUE_CONVERSIONS, 1, enforce=False)


# --- 3. submission --------------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    """What a job is asked to do: its kind, the PDF, its password, the options (None: a job
    without them), the result cache's key of a conversion, and whether to answer debug data."""

    source: Source
    password: str | None
    kind: str = ConversionJob.Kind.CONVERT
    options: Options | None = None
    cache_key: str = ""
    debug: bool = False
    # A version 2 pre-flight: the worker also says which selected pages OCR would read (the
    # options' `ocr`), for the job's price (conversion.runner).
    estimate: bool = False


def conversion_submit(*, caller: Caller, request_id: str, submission: Submission) -> ConversionJob:
    """Record the job and queue it (after commit) on the caller's environment's queue.

    Raises 503 `overloaded` when no live worker takes the queue or it is full, and 503
    `service_unavailable` when the broker refuses the message (the job is abandoned then).
    All PDF work runs on the workers, never in a web thread: a slow document cannot stall the
    other requests a web process is holding. The worker fetches the PDF from the store by key: an
    upload is put there first (deleted when the job ends); a stored file is already there. The
    password is sealed for the worker, never put in the message. Nothing is held here: the
    worker holds the credits once it knows the pages (`conversion_hold`)."""
    queue = queue_for(caller)
    fleet_check(queue)
    source, options = submission.source, submission.options
    if source.path is not None:
        alias, key = Store.JOBS, object_put(Store.JOBS, job_input_key(request_id), source.path)
    else:
        alias, key = Store.FILES, source.key
    job = ConversionJob(
        request_id=request_id,
        kind=submission.kind,
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
            **({"chunking": list(options.chunking)} if options.chunking else {}),
            **({"engine": options.engine} if options.engine else {}),
            **figures_options(options, source.filename),
            **(
                {"estimate": True, "ocr": options.ocr, "ocr_languages": list(options.ocr_languages)}
                if submission.estimate
                else {}
            ),
        }
        if options is not None
        else {},
        cache_key=submission.cache_key,
        max_pages=TEST_KEY_PAGE_LIMIT if caller.is_test else CONVERT_PAGE_LIMIT,
        debug=submission.debug,
        waiter_seen_at=timezone.now(),
    )
    try:
        if submission.password is not None:
            password_seal(request_id=request_id, password=submission.password)
        job.save(force_insert=True)
    except BaseException:
        job_inputs_discard(job=job)
        raise
    sealed = submission.password is not None

    def publish() -> None:
        try:
            current_app.send_task(CONVERT_TASK, args=(request_id, sealed), queue=queue)
        except Exception as exc:
            # The broker is unreachable (kombu gave up its publish retries): nothing will run
            # the job, so it is abandoned and the client told to come back.
            job_abandon(request_id=request_id)
            job_inputs_discard(job=job)
            logger.error("job publish failed", exc_info=exc, extra={"request_id": request_id})
            raise broker_unavailable() from exc

    transaction.on_commit(publish)
    return job


def conversion_hold(
    *,
    organization: Organization,
    environment: str,
    api_key_id: str,
    request_id: str,
    pages: int,
    lease_seconds: float | None = None,
    ocr_pages: int = 0,
) -> Hold:
    """Hold the credits of `pages`, `ocr_pages` of them at the price of a page read by OCR
    (a test key: pages of its monthly allowance) for the request, for a lease of
    `lease_seconds` (by default the settings' lease; a /v2 job's outlives it).

    Raises 402 `insufficient_credits` and holds nothing when they are not available. Holding
    again for the same request returns the hold it has."""
    return credits_hold(
        organization=organization,
        environment=environment,
        api_key_id=api_key_id,
        request_id=request_id,
        pages=pages,
        lease_seconds=lease_seconds,
        ocr_pages=ocr_pages,
    )


@dataclass(frozen=True)
class Price:
    """What a conversion costs: its credits, and the price of a page and of a page read by OCR."""

    credits: int
    credits_per_page: int
    credits_per_ocr_page: int


def conversion_price(*, caller: Caller, pages: int, ocr_pages: int = 0) -> Price:
    """What a conversion of `pages`, `ocr_pages` of them read by OCR, would hold and bill the
    caller (a test key: 0 credits; its pages move through the test allowance)."""
    return Price(
        credits=0 if caller.is_test else page_credits(pages, ocr_pages),
        credits_per_page=CREDITS_PER_PAGE,
        credits_per_ocr_page=ocr_page_credits(),
    )


def conversion_hold_renew(*, request_id: str, lease_seconds: float | None = None) -> bool:
    """Push the lease of the request's live hold forward (by default the settings' lease); False
    when it is settled already. A lapsed lease is released by billing's sweeper."""
    return hold_renew(request_id=request_id, lease_seconds=lease_seconds)


# --- 4. delivery ----------------------------------------------------------------------------


def job_execute(
    *,
    caller: Caller,
    request_id: str,
    is_client_gone: Callable[[], bool],
    meters: Sequence[MeterName] = (),
    submission: Submission,
) -> ConversionJob:
    """Submit a job for a waiting request, wait for it, and return it; its error is raised as the
    request's error, and whatever it holds is released on every error.

    The job holds one of its organization's slots of the worker pool (conversion.share) from
    before its submission until its work is counted; `meters` are required once it has one,
    right before the work starts."""
    with pool_share(queue=queue_for(caller), caller=caller, request_id=request_id, is_client_gone=is_client_gone):
        conversion_meters_require(caller=caller, meters=meters)
        submitted = conversion_submit(caller=caller, request_id=request_id, submission=submission)
        try:
            job = job_wait(request_id=request_id, is_client_gone=is_client_gone)
        except ServiceError:
            # The wait gave the job up (the client left, it never started, its worker was lost,
            # it ran past its limit): the answer is an error, so nothing stays held.
            conversion_release(request_id=request_id)
            raise
        except Exception:
            # The wait itself failed (the database went away): the request answers an error, so
            # whatever the job holds goes back, as far as the database lets us now (else the hold's
            # lease lapses and the sweeper returns it).
            with contextlib.suppress(Exception):
                job_abandon(request_id=request_id)
                conversion_release(request_id=request_id)
            raise
        finally:
            # The job has ended, or will never run (abandoned while queued): drop what it was given.
            job_inputs_discard(job=submitted)
        try:
            # Counted before the slot goes back: the organization's next job is measured with it.
            conversion_work_account(scope=caller, job=job)
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


@dataclass(frozen=True)
class Billed:
    """What a request's hold came to: the pages and credits captured (0 and 0 unless
    `captured`). A test key's capture bills its pages at 0 credits."""

    pages: int
    credits: int
    captured: bool
    ocr_pages: int = 0  # of `pages`, read by OCR and billed at their price


@dataclass(frozen=True)
class Delivery:
    """A delivered conversion: the result's payload and what it billed."""

    payload: dict[str, Any]
    billed: Billed


def conversion_deliver(*, job: ConversionJob, is_client_gone: Callable[[], bool]) -> Delivery:
    """Bill a finished conversion as its answer goes out: mark the job delivered and capture its
    hold in one transaction. Billed nothing when the hold's lease lapsed before the delivery (the
    sweeper returned it).

    A client that already left gets nothing and pays nothing: 400 `bad_request`. On every error
    raised here the hold is released; an error of the answer after this returns is the caller's
    to refund (`conversion_refund`)."""
    try:
        result = CachedResult.objects.get(key=job.cache_key)
        if is_client_gone():
            raise ServiceError(ErrorCode.BAD_REQUEST, "The client closed the connection.")
        with transaction.atomic():
            delivered = ConversionJob.objects.filter(
                pk=job.pk, status=ConversionJob.Status.SUCCEEDED, delivered_at=None
            ).update(delivered_at=timezone.now())
            if not delivered:
                raise ServiceError(
                    ErrorCode.INTERNAL_ERROR, "The conversion's result was already delivered to another request."
                )
            billed = conversion_capture(request_id=job.request_id, pages=job.pages_completed)
    except Exception:
        with contextlib.suppress(Exception):  # else the hold's lease lapses and the sweeper returns it
            conversion_release(request_id=job.request_id)
        raise
    job.pages_billed, job.credits_billed = billed.pages, billed.credits
    return Delivery(payload=result.payload, billed=billed)


# --- 5. capture -----------------------------------------------------------------------------


def conversion_capture(*, request_id: str, pages: int, ocr_pages: int = 0) -> Billed:
    """Bill `pages` of the request's hold (at most the pages held; `ocr_pages` of them read by
    OCR, at their price, never more credits than held) and release the rest; the job, when
    there is one, records what it billed. Returns what the hold came to.

    Idempotent: a hold already captured is not billed again and the first capture is returned;
    a hold released (or none at all) bills nothing, `Billed(0, 0, captured=False)`."""
    with transaction.atomic():
        credits_capture(request_id=request_id, pages=pages, ocr_pages=ocr_pages)
        capture = capture_get(request_id=request_id)
        billed = (
            Billed(pages=capture.pages, credits=capture.credits, captured=True, ocr_pages=capture.ocr_pages)
            if capture is not None
            else Billed(pages=0, credits=0, captured=False)
        )
        ConversionJob.objects.filter(pk=request_id).update(pages_billed=billed.pages, credits_billed=billed.credits)
    return billed


# --- 6. release and refund ------------------------------------------------------------------


def conversion_release(*, request_id: str) -> None:
    """Give the request's whole hold back: it bills nothing. Idempotent; a hold already
    captured stays captured (its refund is `conversion_refund`)."""
    credits_release(request_id=request_id)


def conversion_refund(*, request_id: str, reason: str) -> int:
    """Give back the request's capture because its answer became an error after all: a refund
    row with `reason` (a test key's pages go back to its allowance). Returns the credits refunded;
    0 when nothing was captured or the capture was refunded already (one refund per request)."""
    return capture_refund(request_id=request_id, reason=reason)

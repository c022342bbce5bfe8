"""The worker side of a conversion: pre-flight, page selection, the credit hold, the engine
under the wall-clock limit and the result cache. Called by the Celery task. Its meters and its
money are the conversion service's steps (conversion.services): the worker charges the page
meters and holds the credits once it knows the pages, and releases the hold on every failure;
it never bills: the web side captures the hold as it delivers the 200
(conversion.services.conversion_deliver)."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.keyformat import Environment
from billing.meters import OrgScope
from conversion import engine
from conversion.figures import FigureFiles
from conversion.files import figure_files_discard, figure_files_keep
from conversion.jobs import WAITER_LOST_AFTER, job_abandon_unwatched, job_inputs_discard, job_notify_done
from conversion.models import CachedResult, ConversionJob
from conversion.options import engine_error, engine_withdrawn
from conversion.results import result_payload
from conversion.sealing import password_open
from conversion.services import (
    conversion_hold,
    conversion_hold_renew,
    conversion_meters_charge,
    conversion_meters_give_back,
    conversion_release,
)
from conversion.store import Store, job_input
from core.errors import ErrorCode, ServiceError
from core.handlers import outage_error
from workers.memory import mark_heap_suspect, memory_ceiling

logger = logging.getLogger("svcx.worker")
CANCEL_CHECK_SECONDS = 1.0
DELIVERY_WINDOW_SECONDS = 15.0


class StopClock:
    """should_stop for the engine: True past the wall-clock deadline (`timed_out`), or once
    `gone()`, asked at most every CANCEL_CHECK_SECONDS, says the work is no longer wanted
    (`cancelled`)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.timed_out = False
        self.cancelled = False
        self._checked = time.monotonic()

    def gone(self) -> bool:
        raise NotImplementedError

    def __call__(self) -> bool:
        now = time.monotonic()
        if now >= self.deadline:
            self.timed_out = True
            return True
        if now - self._checked >= CANCEL_CHECK_SECONDS:
            self._checked = now
            if self.gone():
                self.cancelled = True
                return True
        return False


class _Clock(StopClock):
    """The wall-clock deadline and the web side giving up."""

    def __init__(self, job: ConversionJob, deadline: float) -> None:
        super().__init__(deadline)
        self.job = job
        self.hold_taken = False
        self.pages_completed = 0

    def gone(self) -> bool:
        status, watched = ConversionJob.objects.filter(pk=self.job.pk).values_list(
            "status", "waiter_seen_at"
        ).first() or (None, None)
        return status != ConversionJob.Status.RUNNING or (
            watched is not None
            and timezone.now() - watched > WAITER_LOST_AFTER
            and job_abandon_unwatched(request_id=self.job.pk)
        )


class _Heartbeat(threading.Thread):
    """Proves the worker process alive while its job runs, however long one engine call takes
    (a pre-flight or a single heavy page gives the engine no chance to report): writes the job's
    heartbeat and progress and renews the credit hold's lease every few seconds. A process that
    dies stops beating, and the web side answers 500 with the hold released."""

    def __init__(self, clock: _Clock) -> None:
        super().__init__(name=f"heartbeat-{clock.job.pk}", daemon=True)
        self.clock = clock
        self.finished = threading.Event()

    def run(self) -> None:
        interval = float(settings.SVCX_WORKER_HEARTBEAT_INTERVAL)
        job = self.clock.job
        try:
            while not self.finished.wait(interval):
                try:
                    ConversionJob.objects.filter(pk=job.pk, status=ConversionJob.Status.RUNNING).update(
                        heartbeat_at=timezone.now(), pages_completed=self.clock.pages_completed
                    )
                    if self.clock.hold_taken:
                        conversion_hold_renew(request_id=job.request_id)
                except Exception:
                    # A passing database fault must not silence the job: beat again next time,
                    # on a fresh connection.
                    logger.warning("job heartbeat failed", exc_info=True, extra={"request_id": job.pk})
                    connection.close()
        finally:
            connection.close()  # this thread's own database connection

    def stop(self) -> None:
        self.finished.set()
        self.join(timeout=30)


def _fail(job: ConversionJob, error: ServiceError) -> None:
    payload = {
        "code": error.code,
        "message": error.message,
        "param": error.param,
        "details": error.details,
        "retry_after_ms": error.retry_after_ms,
        "headers": error.headers,
    }
    ConversionJob.objects.filter(pk=job.pk, status=ConversionJob.Status.RUNNING).update(
        status=ConversionJob.Status.FAILED, error=payload, finished_at=timezone.now()
    )


def _engine_failure(exc: engine.EngineError, pages_param: str = "options.pages") -> ServiceError:
    # Page-range errors raised here (out of bounds) are about the request's pages, named as
    # the client sent them (`options.pages`, or the raw operations' query parameter `pages`).
    return engine_error(exc, param=pages_param if exc.code.startswith("page_range") else None)


def job_run(*, request_id: str, sealed_password: bool = False) -> None:
    """Run one conversion job. Safe to call twice: only a queued job is claimed, and only while
    its request still waits for it (else it is abandoned here). The PDF comes from the store by
    key; the password, when the request had one, from its seal."""
    if job_abandon_unwatched(request_id=request_id):
        return
    now = timezone.now()
    claimed = ConversionJob.objects.filter(pk=request_id, status=ConversionJob.Status.QUEUED).update(
        status=ConversionJob.Status.RUNNING, started_at=now, heartbeat_at=now
    )
    if not claimed:
        return
    job = ConversionJob.objects.select_related("organization").get(pk=request_id)
    deadline = time.monotonic() + float(settings.SVCX_CONVERSION_TIME_LIMIT)
    clock = _Clock(job, deadline)
    heartbeat = _Heartbeat(clock)
    heartbeat.start()
    try:
        password = password_open(request_id=request_id) if sealed_password else None
        with (
            memory_ceiling(int(settings.SVCX_CONVERSION_MEMORY_LIMIT_MB) * 1024 * 1024),
            job_input(Store(job.source_store), job.source_key) as source,
        ):
            if job.kind == ConversionJob.Kind.CONVERT:
                _run(job, source, password, clock)
            else:
                _run_document(job, source, password, clock)
    except ServiceError as exc:
        conversion_release(request_id=request_id)
        _fail(job, exc)
        if exc.details.get("reason") == engine.OUT_OF_MEMORY:
            mark_heap_suspect()
    except SoftTimeLimitExceeded:
        # The task's backstop limit: the engine did not stop at the wall-clock limit by itself.
        job_time_limit_hit(request_id=request_id, pages_completed=clock.pages_completed)
    except MemoryError:
        # Past the ceiling outside the engine (which reports its own as document_too_complex).
        mark_heap_suspect()
        conversion_release(request_id=request_id)
        _fail(job, _out_of_memory())
    except Exception as exc:
        # PostgreSQL or Redis away mid-conversion (the page meters, the heartbeat) is the outage
        # the web side answers 503 for, retryable; anything else is a fault of ours.
        outage = outage_error(exc)
        if outage is None:
            logger.exception("conversion crashed", extra={"request_id": request_id})
        else:
            logger.error("conversion stopped by an outage", exc_info=exc, extra={"request_id": request_id})
        if outage is not None and "database" in outage.details["checks"]:
            # Django does not reconnect a connection that failed outside a transaction: a new
            # one, for PostgreSQL back by now.
            connection.close()
        try:
            conversion_release(request_id=request_id)
        except Exception:
            # PostgreSQL still away: the hold's lease lapses and holds_sweep gives it back.
            logger.exception("hold of a failed conversion not released", extra={"request_id": request_id})
        _fail(job, outage or ServiceError(ErrorCode.INTERNAL_ERROR))
    finally:
        heartbeat.stop()
        _figures_discard(request_id)
        job_inputs_discard(job=job)
        job_notify_done(request_id=request_id)


def _figures_discard(request_id: str) -> None:
    """Delete the figures' files of a conversion whose result was not kept (failed, timed out,
    abandoned); a kept result's files are no longer pending, and stay. What this leaves (the
    database away) figure_files_sweep deletes later."""
    try:
        figure_files_discard(owner=request_id)
    except Exception:
        logger.exception("figure files of a failed conversion not deleted", extra={"request_id": request_id})


def _out_of_memory() -> ServiceError:
    return ServiceError(
        ErrorCode.DOCUMENT_TOO_COMPLEX,
        "The conversion needed more memory than one conversion may take. Convert fewer or simpler pages.",
        details={"reason": engine.OUT_OF_MEMORY},
    )


def job_time_limit_hit(*, request_id: str, pages_completed: int | None = None) -> None:
    """The task's soft time limit fired (the engine did not stop in time): a timeout, with the
    pages delivered so far (when the caller does not know them, the last heartbeat's count)."""
    conversion_release(request_id=request_id)
    _figures_discard(request_id)
    job = ConversionJob.objects.get(pk=request_id)
    _fail(
        job,
        ServiceError(
            ErrorCode.CONVERSION_TIMEOUT,
            "The conversion exceeded its wall-clock limit.",
            details={
                "pages_completed": job.pages_completed if pages_completed is None else pages_completed,
                "time_limit_seconds": int(settings.SVCX_CONVERSION_TIME_LIMIT),
            },
        ),
    )
    job_notify_done(request_id=request_id)


def _run(job: ConversionJob, source: Path, password: str | None, clock: _Clock) -> None:
    options = job.options
    withdrawn = engine_withdrawn(options)
    if withdrawn is not None:
        raise withdrawn  # before the hold: nothing is held or billed
    pages_param = options.get("pages_param", "options.pages")
    try:
        info = engine.preflight(source, password=password)
        ranges = engine.parse_page_ranges(options["pages"]) if options.get("pages") else None
        pages = engine.select_pages(ranges, info.page_count or 0)
    except engine.EngineError as exc:
        raise _engine_failure(exc, pages_param) from exc
    if len(pages) > job.max_pages:
        who = "a test key" if job.environment == Environment.TEST else "/v1/convert"
        raise ServiceError(
            ErrorCode.TOO_MANY_PAGES,
            f"The selection has {len(pages)} pages; {who} converts at most {job.max_pages} per request. "
            f"Select fewer with `{pages_param}`, for example `1-{job.max_pages}`, then the next ones.",
            param=pages_param,
            details={"pages_selected": len(pages), "max_pages": job.max_pages, "page_count": info.page_count},
        )
    # The page meters count selected pages, known only now; they refuse before the hold.
    scope = OrgScope(organization=job.organization, environment=job.environment)
    charged = conversion_meters_charge(scope=scope, pages=len(pages))
    try:
        conversion_hold(
            organization=job.organization,
            environment=job.environment,
            api_key_id=job.api_key_id,
            request_id=job.request_id,
            pages=len(pages),
        )
    except BaseException:
        # No credits (402), or the database away: nothing was converted, nothing counted.
        conversion_meters_give_back(scope=scope, charged=charged)
        raise
    clock.hold_taken = True

    figures = (
        FigureFiles(
            source=source,
            password=password,
            organization=job.organization,
            environment=job.environment,
            api_key_id=job.api_key_id,
            name=options.get("figures_name", "document"),
            owner=job.request_id,
        )
        if options.get("figures") == "crop"
        else None
    )

    def on_page(page: engine.PageResult) -> None:
        if figures is not None:
            figures.page(page)
        # Progress is written with the clock's next heartbeat, not once per page.
        clock.pages_completed += 1

    try:
        result = engine.convert(
            source,
            pages=pages,
            password=password,
            options=engine.ConvertOptions(
                tables=options["tables"],
                fallback=options["fallback"],
                flavor=options["flavor"],
                engine=options.get("engine", engine.ENGINE_ID),
            ),
            result_budget_bytes=int(settings.SVCX_RESULT_BUDGET_BYTES),
            should_stop=clock,
            on_page=on_page,
            info=info,
        )
    except engine.EngineError as exc:
        raise _engine_failure(exc, pages_param) from exc
    finally:
        if figures is not None:
            figures.close()
    if figures is not None:
        result.warnings.extend(figures.warnings())
    if clock.cancelled:
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "The request was abandoned before the conversion finished.")
    if result.stopped:
        raise ServiceError(
            ErrorCode.CONVERSION_TIMEOUT,
            f"The conversion exceeded its wall-clock limit of {int(settings.SVCX_CONVERSION_TIME_LIMIT)} seconds after "
            f"{len(result.pages)} of {len(pages)} pages. Convert fewer pages per request with `{pages_param}`.",
            details={
                "pages_completed": len(result.pages),
                "pages_selected": len(pages),
                "time_limit_seconds": int(settings.SVCX_CONVERSION_TIME_LIMIT),
            },
        )
    _succeed(job, result_payload(result, info, job.sha256, job.options))


def _succeed(job: ConversionJob, payload: dict[str, Any]) -> None:
    """Cache the result atomically with the job's success, and leave the hold (its lease
    renewed) for the web side to capture as it answers; a job the web side abandoned meanwhile
    is released instead."""
    pages = int(payload["pages_converted"])
    with transaction.atomic():
        text_chars = sum(len(p["markdown"].strip()) for p in payload["pages"])
        finished = ConversionJob.objects.filter(pk=job.pk, status=ConversionJob.Status.RUNNING).update(
            status=ConversionJob.Status.SUCCEEDED,
            pages_completed=pages,
            result={"pages_converted": pages, "text_chars": text_chars},
        )
        if not finished:
            conversion_release(request_id=job.request_id)
            return
        figure_files_keep(owner=job.request_id)  # the cached result's, from now on
        CachedResult.objects.update_or_create(
            key=job.cache_key,
            defaults={
                "organization_id": job.organization_id,
                "environment": job.environment,
                "payload": payload,
                "pages_converted": pages,
                "created_at": timezone.now(),
            },
        )
        # Long enough for the waiting web thread to deliver; short, should it have died meanwhile.
        conversion_hold_renew(request_id=job.request_id, lease_seconds=DELIVERY_WINDOW_SECONDS)
        ConversionJob.objects.filter(pk=job.pk).update(finished_at=timezone.now())


def _outline(info: engine.DocumentInfo) -> list[dict[str, Any]]:
    return [{"level": e.level, "title": e.title, "page": e.page} for e in info.outline]


def _document_info(source: Path, password: str | None) -> engine.DocumentInfo:
    """The engine's facts of the document; a valid PDF without pages is refused everywhere alike."""
    info = engine.inspect(source, password=password)
    if info.page_count == 0:
        raise ServiceError(ErrorCode.PDF_NO_PAGES, "The PDF is valid but its page tree has no pages.")
    return info


def _inspection(job: ConversionJob, source: Path, password: str | None, clock: _Clock) -> dict[str, Any]:
    info = _document_info(source, password)
    # `password_required` is a fact of the document; `page_count` is None when it was not opened.
    opened = info.page_count is not None
    samples: list[dict[str, Any]] = []
    warnings = list(info.warnings)
    # The sampled pages: the first of the request's selection (options.pages), else of the document.
    selected = _selection(job, info.page_count or 0) if opened else []
    sample_pages = min(int(settings.SVCX_INSPECT_SAMPLE_PAGES), len(selected))
    if sample_pages and info.extraction_allowed is not False:
        pages = selected[:sample_pages]
        samples = [
            {
                "page": s.page,
                "has_text_layer": s.has_text_layer,
                "chars": s.chars,
                "sample": s.sample,
                "hidden_text": s.hidden_text,
            }
            for s in engine.text_sample(source, pages=pages, password=password, should_stop=clock)
        ]
        if clock.cancelled:
            raise ServiceError(ErrorCode.INTERNAL_ERROR, "The request was abandoned before the inspection finished.")
        if len(samples) < sample_pages:
            warnings.append(f"Text sampling stopped at the time limit after {len(samples)} of {sample_pages} pages.")
    estimate = (
        {"estimate": _ocr_estimate(job, source, password, clock, selected)}
        if job.options.get("estimate") and opened
        else {}
    )
    return {
        **estimate,
        "page_count": info.page_count,
        "pdf_version": info.pdf_version,
        "encrypted": info.encrypted,
        "password_required": info.password_required,
        "extraction_allowed": info.extraction_allowed,
        "xfa": info.xfa,
        "outline_items": len(info.outline),
        "page_labels": [info.page_labels[p - 1] for p in selected[:sample_pages]] if info.page_labels else None,
        "repaired": info.repaired,
        "warnings": warnings,
        "pages": samples,
    }


def _selection(job: ConversionJob, page_count: int) -> list[int]:
    """The pages the request's `options.pages` selects of the document's `page_count`."""
    try:
        ranges = engine.parse_page_ranges(job.options["pages"]) if job.options.get("pages") else None
        return engine.select_pages(ranges, page_count)
    except engine.EngineError as exc:
        raise _engine_failure(exc, job.options.get("pages_param", "options.pages")) from exc


def _ocr_estimate(
    job: ConversionJob, source: Path, password: str | None, clock: _Clock, selected: list[int]
) -> dict[str, Any]:
    """A version 2 pre-flight (`Submission.estimate`): the selected pages a job with these
    options reads by OCR, `ocr_pages` (page numbers); none with `ocr` off, all when forced,
    with "auto" those the engine's own test finds without a usable text layer (`parsed`: the
    pages it parsed to decide, those its first look left in doubt; the pages it had no time to
    look at are counted in, and `upper_bound` is true then). A selection longer than a job
    takes is not looked at (the job refuses it): `ocr_pages` is left out."""
    estimate: dict[str, Any] = {"pages": selected}
    if len(selected) > int(settings.SVCX_JOB_MAX_PAGES):
        return estimate
    mode = job.options.get("ocr", "off")
    if mode == "force":
        return {**estimate, "ocr_pages": selected, "parsed": 0, "upper_bound": False}
    if mode != "auto":
        return {**estimate, "ocr_pages": [], "parsed": 0, "upper_bound": False}
    plan = engine.ocr_plan(source, pages=selected, password=password, should_stop=clock)
    if clock.cancelled:
        raise ServiceError(ErrorCode.INTERNAL_ERROR, "The request was abandoned before the pre-flight finished.")
    return {**estimate, "ocr_pages": plan.ocr_pages, "parsed": plan.parsed, "upper_bound": plan.upper_bound}


def _run_document(job: ConversionJob, source: Path, password: str | None, clock: _Clock) -> None:
    """Inspect, table of contents, or the pre-flight of an upload: answers, not billed."""
    try:
        if job.kind == ConversionJob.Kind.INSPECT:
            result = _inspection(job, source, password, clock)
        elif job.kind == ConversionJob.Kind.TOC:
            info = _document_info(source, password)
            if info.page_count is None:
                raise ServiceError(
                    ErrorCode.PDF_ENCRYPTED, "The PDF is encrypted: send its password to read the outline."
                )
            result = {"page_count": info.page_count, "entries": _outline(info)}
        else:
            info = _document_info(source, password)
            result = {"page_count": info.page_count}
            if job.options.get("estimate") and info.page_count:
                selected = _selection(job, info.page_count)
                result["estimate"] = _ocr_estimate(job, source, password, clock, selected)
    except engine.EngineError as exc:
        raise _engine_failure(exc) from exc
    ConversionJob.objects.filter(pk=job.pk, status=ConversionJob.Status.RUNNING).update(
        status=ConversionJob.Status.SUCCEEDED, result=result, finished_at=timezone.now()
    )

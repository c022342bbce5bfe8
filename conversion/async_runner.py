"""The worker side of version 2 jobs (`conversion.async_jobs` says how a job runs): a part
parsed, the lead rendering the pages in order, and the sweeper of lost work and old jobs."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import redis
from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from accounts.keyformat import Environment
from conversion import engine
from conversion.async_jobs import (
    PART_TASK,
    async_job_fail,
    chunk_key,
    error_from_payload,
    error_payload,
    job_event_emit,
    job_queues,
    job_work_discard,
    lead_send,
    object_key,
    object_read,
    object_write,
    queue_of,
    retention_end,
)
from conversion.engine.parsed import ParsedStale, parsed_decode, parsed_encode
from conversion.figures import FigureFiles
from conversion.files import figure_files_discard, figure_files_keep
from conversion.jobs import queue_depth
from conversion.models import Job, JobPart
from conversion.options import engine_error, engine_withdrawn
from conversion.results import page_payload, result_payload
from conversion.runner import StopClock
from conversion.sealing import password_unsealed
from conversion.services import conversion_capture, conversion_hold_renew
from conversion.store import Store, job_input, store
from core.errors import ErrorCode, ServiceError
from core.handlers import outage_error
from webhooks.models import EventType
from workers.heartbeat import live_workers
from workers.memory import memory_ceiling

logger = logging.getLogger("svcx.jobs")

# How often a waiting lead looks at the parts again, and a running task at its job (seconds).
POLL_SECONDS = 0.25
# A part or a lead lost this many times fails the job (a page that kills its worker).
MAX_ATTEMPTS = 3

# --- the worker side: parts ------------------------------------------------------------------


class _Beat(threading.Thread):
    """Writes `beat()` every SVCX_WORKER_HEARTBEAT_INTERVAL seconds while a task runs (one
    engine call can take long), on this thread's own database connection."""

    def __init__(self, name: str, beat: Callable[[], None]) -> None:
        super().__init__(name=name, daemon=True)
        self.beat = beat
        self.finished = threading.Event()

    def run(self) -> None:
        interval = float(settings.SVCX_WORKER_HEARTBEAT_INTERVAL)
        try:
            while not self.finished.wait(interval):
                try:
                    self.beat()
                except Exception:
                    logger.warning("job heartbeat failed", exc_info=True)
                    connection.close()
        finally:
            connection.close()

    def __enter__(self) -> _Beat:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.finished.set()
        self.join(timeout=30)


class _Stop(StopClock):
    """The job's deadline, and the job canceled or ended elsewhere (`cancelled`)."""

    def __init__(self, job_id: str, deadline: float) -> None:
        super().__init__(deadline)
        self.job_id = job_id

    def gone(self) -> bool:
        status = Job.objects.filter(pk=self.job_id).values_list("status", flat=True).first()
        return status not in (Job.Status.RUNNING, Job.Status.QUEUED)


def _lost(beat: str, worker: str) -> Q:
    """The work (a part, a lead: the names of its beat and worker fields) whose holder is gone:
    no beat for SVCX_JOB_LOST_AFTER; or none for SVCX_WORKER_HEARTBEAT_TTL while the worker that
    claimed it no longer announces itself (workers.heartbeat). The announcements come from the
    worker's main process, apart from the process parsing, so a slow task never stops them: the
    second rule takes back the work of a worker that is gone as a whole (killed, its machine
    lost) sooner, and never a slow task's of a live one. Without the announcements (Redis away),
    only the first rule holds."""
    now = timezone.now()
    stale = Q(**{f"{beat}__lt": now - timedelta(seconds=float(settings.SVCX_JOB_LOST_AFTER))})
    try:
        live = live_workers()
    except redis.RedisError:
        return stale
    silent = Q(**{f"{beat}__lt": now - timedelta(seconds=float(settings.SVCX_WORKER_HEARTBEAT_TTL))})
    return stale | (silent & ~Q(**{worker: ""}) & ~Q(**{f"{worker}__in": live}))


def _part_lost() -> Q:
    return Q(status=JobPart.Status.RUNNING) & _lost("heartbeat_at", "worker")


def _lead_lost() -> Q:
    return Q(status=Job.Status.RUNNING) & _lost("lead_heartbeat_at", "lead_worker")


def _claim_part(job_id: str, index: int, worker: str) -> bool:
    """Take a part that is queued, or running on a worker that is lost (`_lost`), for `worker`."""
    return bool(
        JobPart.objects.filter(job_id=job_id, index=index)
        .filter(Q(status=JobPart.Status.QUEUED) | _part_lost())
        .update(status=JobPart.Status.RUNNING, heartbeat_at=timezone.now(), attempts=F("attempts") + 1, worker=worker)
    )


def _password(job: Job) -> str | None:
    if not job.sealed_password:
        return None
    return password_unsealed(bound_to=job.id, sealed=bytes(job.sealed_password))


@contextlib.contextmanager
def _source(job: Job) -> Iterator[Path]:
    with job_input(Store(job.source_store), job.source_key) as path:
        yield path


def _parse_part(job: Job, part: JobPart, source: Path, password: str | None) -> None:
    """Parse a claimed part and keep its layout; the part ends done or failed."""
    stop = _Stop(job.id, time.monotonic() + float(settings.SVCX_JOB_PART_TIME_LIMIT))

    def beat() -> None:
        JobPart.objects.filter(pk=part.pk, status=JobPart.Status.RUNNING).update(heartbeat_at=timezone.now())

    pages = job.pages[part.start : part.end]
    withdrawn = engine_withdrawn(job.options)
    if withdrawn is not None:
        _part_failed(part, withdrawn)
        return
    try:
        with (
            _Beat(f"part-{job.id}-{part.index}", beat),
            memory_ceiling(int(settings.SVCX_CONVERSION_MEMORY_LIMIT_MB) * 1024 * 1024),
        ):
            parsed = engine.parse_pages(
                source,
                pages=pages,
                password=password,
                should_stop=stop,
                ocr=_ocr(job),
                engine=job.options.get("engine", engine.ENGINE_ID),
            )
    except engine.EngineError as exc:
        _part_failed(part, engine_error(exc))
        return
    if stop.cancelled:
        return  # the job was canceled or ended: nothing to keep
    if parsed.stopped:
        _part_failed(
            part,
            ServiceError(
                ErrorCode.CONVERSION_TIMEOUT,
                f"Pages {pages[0]}-{pages[-1]} were not parsed within "
                f"{int(settings.SVCX_JOB_PART_TIME_LIMIT)} seconds.",
                details={"pages_completed": 0, "time_limit_seconds": int(settings.SVCX_JOB_PART_TIME_LIMIT)},
            ),
        )
        return
    key = object_write(object_key(job.id, f"parts/{part.index}.json.z"), parsed_encode(parsed.models))
    with transaction.atomic():
        done = JobPart.objects.filter(pk=part.pk, status=JobPart.Status.RUNNING).update(
            status=JobPart.Status.DONE, stored_key=key, finished_at=timezone.now()
        )
        if done:
            Job.objects.filter(pk=job.id).update(pages_parsed=F("pages_parsed") + len(pages))


def _ocr(job: Job) -> engine.OcrOptions:
    """The job's option `ocr` (off for a job made before it existed): the parts read the pages
    that need it from their picture, and the lead renders them knowing OCR was on."""
    mode = job.options.get("ocr", "off")
    return engine.OcrOptions(mode=mode, languages=tuple(job.options.get("ocr_languages") or ("en",)))


def _part_failed(part: JobPart, error: ServiceError) -> None:
    JobPart.objects.filter(pk=part.pk, status=JobPart.Status.RUNNING).update(
        status=JobPart.Status.FAILED, error=error_payload(error), finished_at=timezone.now()
    )


def async_job_part(*, job_id: str, index: int, worker: str = "") -> None:
    """Parse one part of a job on `worker` (the Celery node name of the task's worker), unless it
    is taken, done, or the job has ended."""
    job = Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).first()
    if job is None or not _claim_part(job_id, index, worker):
        return
    part = JobPart.objects.get(job_id=job_id, index=index)
    if part.attempts > MAX_ATTEMPTS:
        _part_failed(part, _lost_error(f"Pages of part {index} stopped their worker {MAX_ATTEMPTS} times."))
        return
    try:
        with _source(job) as source:
            _parse_part(job, part, source, _password(job))
    except ServiceError as exc:
        _part_failed(part, exc)


def _lost_error(message: str) -> ServiceError:
    return ServiceError(ErrorCode.INTERNAL_ERROR, message)


# --- the worker side: the lead -----------------------------------------------------------------


class _Progress:
    """The lead's pages as it renders them: counted for the heartbeat, and written in chunks
    of JSON lines (one page object a line) for the clients that read them while it runs."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.completed = 0
        self.chunks = 0
        self.lines: list[str] = []

    def page(self, result: engine.PageResult) -> None:
        self.completed += 1
        self.lines.append(json.dumps(page_payload(result), ensure_ascii=False, separators=(",", ":")))
        if len(self.lines) >= int(settings.SVCX_JOB_FLUSH_PAGES):
            self.flush()

    def flush(self) -> None:
        if not self.lines:
            return
        object_write(chunk_key(self.job.id, self.chunks), ("\n".join(self.lines) + "\n").encode())
        self.chunks += 1
        self.lines = []
        # A lead taking over renders again from the first page: what was written stays.
        Job.objects.filter(pk=self.job.id, status=Job.Status.RUNNING).update(
            pages_completed=Greatest(F("pages_completed"), Value(self.completed)),
            page_chunks=Greatest(F("page_chunks"), Value(self.chunks)),
        )


def _claim_lead(job_id: str, worker: str) -> Job | None:
    now = timezone.now()
    claimed = (
        Job.objects.filter(pk=job_id)
        .filter(Q(status=Job.Status.QUEUED) | _lead_lost())
        .update(
            status=Job.Status.RUNNING,
            started_at=Coalesce(F("started_at"), Value(now)),
            lead_heartbeat_at=now,
            lead_attempts=F("lead_attempts") + 1,
            lead_worker=worker,
        )
    )
    if not claimed:
        return None
    return Job.objects.select_related("organization").get(pk=job_id)


def async_job_lead(*, job_id: str, worker: str = "") -> None:
    """Lead one job on `worker` (the Celery node name of the task's worker): render its pages in
    order from the parts as they are parsed (parsing those no worker has taken), then keep the
    result and bill it. Safe to run twice: a lead runs only while the job has no live one."""
    job = _claim_lead(job_id, worker)
    if job is None:
        return
    if job.lead_attempts > MAX_ATTEMPTS:
        async_job_fail(
            job_id=job.id, error=_lost_error(f"The job's worker stopped {MAX_ATTEMPTS} times; it was given up.")
        )
        return
    withdrawn = engine_withdrawn(job.options)
    if withdrawn is not None:
        # Its hold released, nothing billed: the job never runs on an engine the service withdrew.
        async_job_fail(job_id=job.id, error=withdrawn)
        return
    deadline = time.monotonic() + max(
        0.0, float(settings.SVCX_JOB_TIME_LIMIT) - (timezone.now() - job.created_at).total_seconds()
    )
    stop = _Stop(job.id, deadline)
    progress = _Progress(job)
    # This lead's figures replace those of the leads before it, which never kept a result.
    lead = _lead_owner(job)
    figure_files_discard(owner=job.id, keep=lead)

    def beat() -> None:
        Job.objects.filter(pk=job.id, status=Job.Status.RUNNING).update(lead_heartbeat_at=timezone.now())
        conversion_hold_renew(
            request_id=job.id,
            lease_seconds=float(settings.SVCX_JOB_TIME_LIMIT) + float(settings.SVCX_JOB_LOST_AFTER),
        )

    try:
        with _Beat(f"lead-{job.id}", beat), _source(job) as source:
            _lead(job, source, _password(job), stop, progress, worker)
    except ServiceError as exc:
        async_job_fail(job_id=job.id, error=exc)
    except Exception as exc:
        outage = outage_error(exc)
        if outage is not None:
            # PostgreSQL or Redis went away (a restart, a fail-over): not the job's fault. Its
            # lead stops beating, and the sweeper gives the job to a new lead, which renders
            # again from the parts kept; failing it here would bill nothing but lose the work
            # (MAX_ATTEMPTS bounds an outage that does not end).
            logger.warning(
                "job lead stopped by an outage; the job will be taken over",
                exc_info=exc,
                extra={"job_id": job.id, "checks": outage.details["checks"]},
            )
            if "database" in outage.details["checks"]:
                # Django does not reconnect a connection that failed outside a transaction.
                connection.close()
            return
        logger.exception("job lead crashed", extra={"job_id": job.id})
        async_job_fail(
            job_id=job.id,
            error=ServiceError(ErrorCode.INTERNAL_ERROR, "The job failed in the service; it was not billed."),
        )
    finally:
        # The figures of a result this lead did not keep (failed, canceled, timed out, lost its
        # database); a kept result's are no longer pending. What is left, the next lead or
        # figure_files_sweep deletes.
        try:
            figure_files_discard(owner=lead)
        except Exception:
            logger.exception("figure files of a lead not deleted", extra={"job_id": job.id})


def _lead_owner(job: Job) -> str:
    """What the figures' files of this lead of the job are pending for (FigureFiles.owner)."""
    return f"{job.id}/{job.lead_attempts}"


def _lead(job: Job, source: Path, password: str | None, stop: _Stop, progress: _Progress, worker: str) -> None:
    try:
        info = engine.preflight(source, password=password)
    except engine.EngineError as exc:
        raise engine_error(exc) from exc
    parts = list(JobPart.objects.filter(job_id=job.id).order_by("index"))
    figures = (
        FigureFiles(
            source=source,
            password=password,
            organization=job.organization,
            environment=job.environment,
            api_key_id=job.api_key_id,
            name=job.options.get("figures_name", "document"),
            owner=_lead_owner(job),
        )
        if job.options.get("figures") == "crop"
        else None
    )

    def on_page(page: engine.PageResult) -> None:
        if figures is not None:
            figures.page(page)  # before the page is streamed
        progress.page(page)

    try:
        result = engine.convert(
            source,
            pages=job.pages,
            password=password,
            options=engine.ConvertOptions(
                tables=job.options.get("tables", "markdown"),
                fallback=job.options.get("fallback", "empty"),
                flavor=job.options.get("flavor", "gfm"),
                ocr=_ocr(job),
                engine=job.options.get("engine", engine.ENGINE_ID),
            ),
            result_budget_bytes=int(settings.SVCX_JOB_RESULT_BUDGET_BYTES),
            should_stop=stop,
            on_page=on_page,
            info=info,
            parsed=_parsed_in_order(job, parts, source, password, stop, worker),
        )
    except engine.EngineError as exc:
        raise engine_error(exc) from exc
    finally:
        if figures is not None:
            figures.close()
    if figures is not None:
        result.warnings.extend(figures.warnings())
    if stop.cancelled:
        return  # canceled (or ended by the sweeper) meanwhile: it has settled its money
    if result.stopped:
        raise ServiceError(
            ErrorCode.CONVERSION_TIMEOUT,
            f"The job exceeded its time limit of {int(settings.SVCX_JOB_TIME_LIMIT)} seconds after "
            f"{len(result.pages)} of {job.pages_total} pages.",
            details={
                "pages_completed": len(result.pages),
                "pages_selected": job.pages_total,
                "time_limit_seconds": int(settings.SVCX_JOB_TIME_LIMIT),
            },
        )
    progress.flush()
    _succeed(
        job,
        result_payload(result, info, job.sha256, job.options),
        ocr_pages=len(result.ocr_pages),
    )


def _parsed_in_order(
    job: Job, parts: list[JobPart], source: Path, password: str | None, stop: _Stop, worker: str
) -> Iterator[engine.PageModel | int]:
    """Every part's layout in page order: read when a worker parsed it, parsed here when no
    worker has taken it; while the next one is being parsed elsewhere, parse a later one."""
    for part in parts:
        while True:
            if stop():
                return
            found = JobPart.objects.filter(pk=part.pk).values("status", "stored_key", "error").first()
            state: dict[str, Any] = dict(found) if found else {}
            if state.get("status") == JobPart.Status.DONE:
                try:
                    yield from parsed_decode(object_read(state["stored_key"]))
                    break
                except (ParsedStale, FileNotFoundError):
                    # Parsed by another engine version (a deploy mid-job) or lost: parse again.
                    JobPart.objects.filter(pk=part.pk, status=JobPart.Status.DONE).update(status=JobPart.Status.QUEUED)
                    continue
            if state.get("status") == JobPart.Status.FAILED:
                raise error_from_payload(state["error"] or {"code": ErrorCode.INTERNAL_ERROR})
            if _claim_part(job.id, part.index, worker):
                _parse_part(job, part, source, password)
                continue
            spare = _claim_spare(job.id, after=part.index, worker=worker)
            if spare is not None:
                _parse_part(job, parts[spare], source, password)
                continue
            time.sleep(POLL_SECONDS)


def _claim_spare(job_id: str, *, after: int, worker: str) -> int | None:
    """Claim the first queued part after `after`; its index, or None when none is left."""
    queued = JobPart.objects.filter(job_id=job_id, status=JobPart.Status.QUEUED, index__gt=after)
    for index in queued.order_by("index").values_list("index", flat=True)[:4]:
        if _claim_part(job_id, index, worker):
            return int(index)
    return None


def _succeed(job: Job, payload: dict[str, Any], *, ocr_pages: int = 0) -> None:
    """Keep the result, then bill its pages (`ocr_pages` of them read by OCR, at their price,
    never more than held) and end the job, in one transaction; a job canceled meanwhile keeps
    nothing. Each lead keeps its result under a name of its own: a lead that was replaced but
    finishes anyway, after the job succeeded, deletes its own result and figures, never the
    kept ones."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    key = object_write(object_key(job.id, f"result-{job.lead_attempts}.json"), body)
    pages = int(payload["pages_converted"])
    with transaction.atomic():
        # Only the job's current lead keeps a result: a lead that was replaced (its worker taken
        # for lost) may still finish, before or after the new one, and its figures are gone.
        finished = (
            Job.objects.select_for_update()
            .filter(pk=job.id, status=Job.Status.RUNNING, lead_attempts=job.lead_attempts)
            .first()
        )
        if finished is None:
            owner = _lead_owner(job)

            def discard() -> None:
                with contextlib.suppress(FileNotFoundError):
                    store(Store.ASYNC).delete(key)
                figure_files_discard(owner=owner)
                ended = Job.objects.filter(pk=job.id, status__in=[Job.Status.CANCELED, Job.Status.FAILED])
                if ended.exists():
                    job_work_discard(job.id, keep_result=False)  # canceled or failed: nothing is kept

            transaction.on_commit(discard)
            return
        billed = conversion_capture(request_id=job.id, pages=pages, ocr_pages=ocr_pages)
        figure_files_keep(owner=_lead_owner(job))  # the result's, from now on
        Job.objects.filter(pk=job.id).update(
            status=Job.Status.SUCCEEDED,
            ocr_pages=billed.ocr_pages,
            result_key=key,
            result_bytes=len(body),
            pages_completed=pages,
            pages_billed=billed.pages,
            credits_billed=billed.credits,
            warnings=list(payload["warnings"]),
            finished_at=timezone.now(),
            sealed_password=None,
            expires_at=retention_end(),
        )
        job_event_emit(job_id=job.id, type=EventType.JOB_SUCCEEDED)
        transaction.on_commit(lambda: job_work_discard(job.id, keep_result=True))


# --- the sweeper -------------------------------------------------------------------------------

ACTIVE = (Job.Status.QUEUED, Job.Status.RUNNING)


def _send(parts: list[JobPart], leads: list[Job], now: datetime) -> int:
    """Send a task for each part and lead, noting when. Returns how many were sent."""
    for part in parts:
        JobPart.objects.filter(pk=part.pk).update(sent_at=now)
        current_app.send_task(PART_TASK, args=[part.job_id, part.index], queue=queue_of(part.job))
    for job in leads:
        Job.objects.filter(pk=job.pk).update(lead_sent_at=now)
        lead_send(job)
    return len(parts) + len(leads)


def _tasks_lost(environment: str, queue: str, now: datetime) -> tuple[list[JobPart], list[Job]]:
    """The parts and leads of `queue`'s jobs whose tasks the broker lost (a Redis restarted
    without its data): when the queue holds fewer tasks than there are parts and leads waiting for
    one (queued, or lost by their worker), that many of them, those whose task was sent longest
    ago and at least SVCX_JOB_RESEND_AFTER ago. A queue as long as the work waiting for it gets
    nothing, however long the work waits: a busy pool is not sent duplicates. Those sent twice
    cost a claim that fails (the claims are conditional); without the queue's length (Redis
    away), nothing is sent."""
    try:
        depth = queue_depth(queue)
    except redis.RedisError:
        return [], []
    parts = JobPart.objects.filter(job__environment=environment, job__status__in=ACTIVE).filter(
        Q(status=JobPart.Status.QUEUED) | _part_lost()
    )
    leads = Job.objects.filter(environment=environment).filter(Q(status=Job.Status.QUEUED) | _lead_lost())
    missing = parts.count() + leads.count() - depth
    if missing <= 0:
        return [], []
    before = now - timedelta(seconds=float(settings.SVCX_JOB_RESEND_AFTER))
    oldest = F("sent_at").asc(nulls_first=True)
    stale_parts = list(
        parts.filter(Q(sent_at__isnull=True) | Q(sent_at__lt=before))
        .select_related("job")
        .order_by(oldest, "job_id", "index")[:missing]
    )
    stale_leads = list(
        leads.filter(Q(lead_sent_at__isnull=True) | Q(lead_sent_at__lt=before)).order_by(
            F("lead_sent_at").asc(nulls_first=True)
        )[:missing]
    )
    candidates: list[JobPart | Job] = [*stale_parts, *stale_leads]
    by_age = sorted(candidates, key=_sent_at)[:missing]
    return [x for x in by_age if isinstance(x, JobPart)], [x for x in by_age if isinstance(x, Job)]


def _sent_at(item: JobPart | Job) -> datetime:
    when = item.sent_at if isinstance(item, JobPart) else item.lead_sent_at
    return when or datetime.min.replace(tzinfo=UTC)


def async_jobs_sweep() -> dict[str, int]:
    """Give lost parts and leads to other workers, send again the tasks the broker lost, end jobs
    past their time limit, and delete jobs past their retention. Returns counts by what was done."""
    counts = dict.fromkeys(("parts_requeued", "leads_sent", "parts_resent", "leads_resent", "timed_out", "expired"), 0)
    now = timezone.now()
    # Lost work: one task for each, once since it was lost (a task sent before its last beat).
    lost_parts = (
        JobPart.objects.filter(_part_lost(), job__status__in=ACTIVE)
        .filter(Q(sent_at__isnull=True) | Q(sent_at__lt=F("heartbeat_at")))
        .select_related("job")
    )
    counts["parts_requeued"] = _send(list(lost_parts[:1000]), [], now)
    lost_leads = Job.objects.filter(_lead_lost()).filter(
        Q(lead_sent_at__isnull=True) | Q(lead_sent_at__lt=F("lead_heartbeat_at"))
    )
    counts["leads_sent"] = _send([], list(lost_leads[:1000]), now)
    for environment, queue in zip((Environment.LIVE, Environment.TEST), job_queues(), strict=True):
        parts, leads = _tasks_lost(environment, queue, now)
        counts["parts_resent"] += _send(parts, [], now)
        counts["leads_resent"] += _send([], leads, now)
    limit = timedelta(seconds=float(settings.SVCX_JOB_TIME_LIMIT))
    now = timezone.now()
    for job in Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("created_at")[:1000]:
        if now - job.created_at > limit:
            counts["timed_out"] += async_job_fail(
                job_id=job.id,
                error=ServiceError(
                    ErrorCode.CONVERSION_TIMEOUT,
                    f"The job exceeded its time limit of {int(limit.total_seconds())} seconds.",
                    details={"pages_completed": job.pages_completed, "time_limit_seconds": int(limit.total_seconds())},
                ),
            )
    for job in Job.objects.filter(expires_at__lt=now).exclude(status__in=[Job.Status.QUEUED, Job.Status.RUNNING])[:200]:
        job_work_discard(job.id, keep_result=False)
        if job.source_store == Store.ASYNC:
            with contextlib.suppress(FileNotFoundError):
                store(Store.ASYNC).delete(job.source_key)
        job.delete()
        counts["expired"] += 1
    return counts

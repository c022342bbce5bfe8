"""Version 2 jobs: conversions of any length, run in the background over the worker pool.
This module is the side that creates, cancels and reads jobs; `conversion.async_runner` is the
worker side that runs them.

A job's selected pages are cut into parts of SVCX_JOB_PART_PAGES pages. Every part has a task
on the jobs queue, and the job has one lead task. Any worker parses a part (the costly half of
a conversion, `engine.parse_pages`) and keeps its layout in the store; the lead renders the
pages in page order as their parts come (`engine.convert(..., parsed=...)`), parsing parts
itself whenever none is ready for it, so that

- the pages are those one conversion of the whole selection gives (the document's styles,
  running headers, tables and words across page breaks, seen as one conversion sees them);
- the parts are parsed in parallel by as many workers as the pool has;
- a worker lost mid-job loses at most its part: the sweeper gives a part whose worker stopped
  beating to another, and a lead that stopped to a new lead, which renders again from the
  parts kept (rendering is a few percent of the work); a task the broker lost is sent again
  (`conversion.async_runner.async_jobs_sweep` has the rules).

Money: the credits of the selected pages are held when the job is created (402 when they are
not there, and nothing is created), captured for the pages of the result when the job
succeeds (after the result is in the store: no page is billed that the client cannot fetch),
released when it fails or is canceled. With the option `ocr`, the pages its pre-flight finds
OCR will read (conversion.runner, on the interactive queue) are held at the price of a page
read by OCR (SVCX_OCR_PAGE_CREDITS, kept with the hold); the capture bills the pages the result
read by OCR at the held price, never more than was held (billing.ledger). A canceled job keeps
no result. Results, parts and inputs live SVCX_JOB_RETENTION after the job ends; then the job
is deleted.

Every step is safe to run twice: parts and leads are claimed with conditional updates, the
hold is settled once (billing.ledger).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from accounts.keyformat import Environment
from accounts.models import Organization
from conversion.files import figure_files_discard
from conversion.models import Job, JobPart
from conversion.sealing import password_sealed
from conversion.serializers import JobSerializer
from conversion.services import conversion_hold, conversion_release
from conversion.store import Store, store
from core.errors import ErrorCode, ServiceError
from webhooks.models import EventType
from webhooks.services import webhook_event_emit

logger = logging.getLogger("svcx.jobs")

LEAD_TASK = "conversion.job_lead"
PART_TASK = "conversion.job_part"


def job_queues() -> tuple[str, str]:
    """The live and the test jobs queue: apart from version 1's, so that a batch of long
    jobs never delays an interactive conversion."""
    return settings.SVCX_QUEUE_PREFIX + "jobs", settings.SVCX_QUEUE_PREFIX + "jobs_test"


def queue_of(job: Job) -> str:
    live, test = job_queues()
    return test if job.environment == Environment.TEST else live


def parts_plan(pages_total: int, part_pages: int) -> list[tuple[int, int]]:
    """(start, end) positions in the selection of each part: equal runs of `part_pages`."""
    return [(s, min(s + part_pages, pages_total)) for s in range(0, pages_total, part_pages)]


def object_key(job_id: str, name: str) -> str:
    return f"{job_id}/{name}"


def object_write(key: str, data: bytes) -> str:
    storage = store(Store.ASYNC)
    with contextlib.suppress(FileNotFoundError):
        storage.delete(key)  # a part parsed again replaces its layout
    return str(storage.save(key, ContentFile(data)))


def object_read(key: str) -> bytes:
    with store(Store.ASYNC).open(key, "rb") as handle:
        return bytes(handle.read())


def chunk_key(job_id: str, chunk: int) -> str:
    return object_key(job_id, f"pages/{chunk}.ndjson")


def error_payload(error: ServiceError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, "param": error.param, "details": error.details}


def error_from_payload(payload: dict[str, Any]) -> ServiceError:
    return ServiceError(
        ErrorCode(payload["code"]), payload.get("message"), param=payload.get("param"), details=payload.get("details")
    )


# --- creating and canceling ------------------------------------------------------------------


@dataclass(frozen=True)
class JobSource:
    """Where the job's PDF is: an alias of the store and its key (an upload the caller already
    put in the "async" store under the job's id, or a stored file)."""

    store: Store
    key: str
    sha256: str
    filename: str = ""


def async_job_create(
    *,
    job_id: str,
    organization: Organization,
    environment: str,
    api_key_id: str,
    request_id: str,
    source: JobSource,
    options: dict[str, Any],
    pages: list[int],
    page_count: int = 0,
    password: str | None = None,
    webhook_metadata: Any = None,
    ocr_pages: int = 0,
    warnings: list[str] | None = None,
) -> Job:
    """Create the job, hold the credits of its pages (`ocr_pages` of them, those its pre-flight
    found OCR would read, at the price of a page read by OCR) and queue its tasks once committed.

    Raises ServiceError `insufficient_credits` (nothing is created then)."""
    plan = parts_plan(len(pages), int(settings.SVCX_JOB_PART_PAGES))
    now = timezone.now()
    with transaction.atomic():
        job = Job.objects.create(
            id=job_id,
            organization=organization,
            environment=environment,
            api_key_id=api_key_id,
            request_id=request_id,
            source_store=source.store,
            source_key=source.key,
            sha256=source.sha256,
            filename=source.filename,
            options=options,
            pages=pages,
            webhook_metadata=webhook_metadata,
            sealed_password=password_sealed(bound_to=job_id, password=password) if password else None,
            page_count=page_count,
            pages_total=len(pages),
            ocr_pages=ocr_pages,
            warnings=list(warnings or []),
            parts_total=len(plan),
            expires_at=now + timedelta(seconds=float(settings.SVCX_JOB_TIME_LIMIT) + _retention()),
            lead_sent_at=now,
        )
        JobPart.objects.bulk_create(
            JobPart(job=job, index=i, start=s, end=e, sent_at=now) for i, (s, e) in enumerate(plan)
        )
        hold = conversion_hold(
            organization=organization,
            environment=environment,
            api_key_id=api_key_id,
            request_id=job.id,
            pages=len(pages),
            ocr_pages=ocr_pages,
            # The hold outlives the longest job; the lead renews it while it runs.
            lease_seconds=float(settings.SVCX_JOB_TIME_LIMIT) + float(settings.SVCX_JOB_LOST_AFTER),
        )
        Job.objects.filter(pk=job.pk).update(credits_held=hold.credits)
        job.credits_held = hold.credits
        transaction.on_commit(lambda: _enqueue_all(job))
    return job


def _enqueue_all(job: Job) -> None:
    try:
        lead_send(job)
        for index in range(job.parts_total):
            current_app.send_task(PART_TASK, args=[job.id, index], queue=queue_of(job))
    except Exception:
        # The broker is away: the sweeper sends the tasks again once the queue is found short
        # of them (async_runner._tasks_lost).
        logger.warning("job tasks not queued; the sweeper will", exc_info=True, extra={"job_id": job.id})


def lead_send(job: Job) -> None:
    current_app.send_task(LEAD_TASK, args=[job.id], queue=queue_of(job))


def async_job_cancel(*, job: Job) -> Job:
    """Cancel a queued or running job: it bills nothing and keeps no result. A job that has
    ended is returned as it is."""
    with transaction.atomic():
        canceled = Job.objects.filter(pk=job.pk, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.CANCELED, finished_at=timezone.now(), sealed_password=None, expires_at=retention_end()
        )
        if canceled:
            conversion_release(request_id=job.id)
            job_event_emit(job_id=job.id, type=EventType.JOB_CANCELED)
            transaction.on_commit(lambda: job_work_discard(job.id, keep_result=False))
    job.refresh_from_db()
    return job


def _retention() -> float:
    return float(settings.SVCX_JOB_RETENTION)


def job_event_emit(*, job_id: str, type: EventType) -> None:
    """The webhook event of a job that has just ended (in the transaction that ended it): the
    job as GET /v2/jobs/{id} answers it, `webhook_metadata` included."""
    job = Job.objects.select_related("organization").get(pk=job_id)
    webhook_event_emit(organization=job.organization, type=type, data=dict(JobSerializer(job).data))


def retention_end() -> datetime:
    return timezone.now() + timedelta(seconds=_retention())


def async_job_fail(*, job_id: str, error: ServiceError) -> bool:
    """End a running or queued job as failed, its hold released; False when it had ended."""
    with transaction.atomic():
        failed = Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.FAILED,
            error=error_payload(error),
            finished_at=timezone.now(),
            sealed_password=None,
            expires_at=retention_end(),
        )
        if failed:
            conversion_release(request_id=job_id)
            job_event_emit(job_id=job_id, type=EventType.JOB_FAILED)
            transaction.on_commit(lambda: job_work_discard(job_id, keep_result=False))
    return bool(failed)


def job_work_discard(job_id: str, *, keep_result: bool) -> None:
    """Delete the parts' layout, the pages written while the job ran, the results of leads that
    were not kept and the figures' files it did not keep (and, unless kept, the result) of an
    ended job."""
    storage = store(Store.ASYNC)
    keys = list(JobPart.objects.filter(job_id=job_id).exclude(stored_key="").values_list("stored_key", flat=True))
    chunks = Job.objects.filter(pk=job_id).values_list("page_chunks", flat=True).first() or 0
    keys += [chunk_key(job_id, c) for c in range(chunks)]
    # Each lead wrote its result under a name of its own (result-<attempt>.json): all but the
    # kept one go, and the kept one too unless it is kept.
    row = Job.objects.filter(pk=job_id).values_list("result_key", "lead_attempts").first()
    result_key, attempts = row if row is not None else ("", 0)
    written = [
        object_key(job_id, "result.json"),
        *(object_key(job_id, f"result-{n}.json") for n in range(1, attempts + 1)),
    ]
    keys += [k for k in written if not (keep_result and k == result_key)]
    for key in keys:
        with contextlib.suppress(FileNotFoundError):
            storage.delete(key)
    JobPart.objects.filter(job_id=job_id).update(stored_key="")
    # The figures' files no kept result points at (a canceled or failed job's, a lost lead's);
    # a succeeded job's own are kept and stay for their retention.
    figure_files_discard(owner=job_id)


# --- results -----------------------------------------------------------------------------------


def job_result_bytes(*, job: Job) -> bytes:
    """The stored result body of a succeeded job (the version 1 result)."""
    return object_read(job.result_key)


def job_pages_so_far(*, job: Job, after: int = 0) -> Iterator[dict[str, Any]]:
    """The pages rendered so far, in page order, from the `after`-th on (each the version 1
    result's page object): the result's pages once the job succeeded."""
    if job.status == Job.Status.SUCCEEDED:
        yield from json.loads(job_result_bytes(job=job))["pages"][after:]
        return
    seen = 0
    for chunk in range(job.page_chunks):
        try:
            data = object_read(chunk_key(job.id, chunk))
        except FileNotFoundError:
            return
        for line in data.decode().splitlines():
            if line and seen >= after:
                yield json.loads(line)
            seen += 1 if line else 0

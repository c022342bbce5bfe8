"""Reads of conversion: version 2 jobs and their results."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.authentication import Caller
from accounts.models import Organization
from conversion import engine
from conversion.async_jobs import job_pages_so_far, job_result_bytes
from conversion.models import Job
from conversion.results import pages_markdown
from conversion.serializers import JobResultSerializer
from core.errors import ErrorCode, ServiceError, caller_text
from core.ids import is_id
from core.pagination import after_cursor


def jobs_kept(*, organization: Organization, environment: str | None = None) -> QuerySet[Job]:
    """The organization's jobs (of `environment`, or of both) that have not expired: a job past
    its retention is gone for every reader, also before the sweeper deletes it."""
    jobs = Job.objects.filter(organization=organization)
    if environment is not None:
        jobs = jobs.filter(environment=environment)
    return jobs.filter(Q(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]) | Q(expires_at__gt=timezone.now()))


def job_get(*, caller: Caller, job_id: str) -> Job:
    """The caller's job (its organization and environment). Raises 404 `job_not_found`, also for
    a job past its retention that the sweeper has not deleted yet."""
    jobs = jobs_kept(organization=caller.organization, environment=caller.environment)
    job = jobs.filter(pk=job_id).first() if is_id(job_id, "job") else None
    if job is None:
        raise ServiceError(
            ErrorCode.JOB_NOT_FOUND,
            f"No job {caller_text(job_id)!r} for this key's organization and environment.",
            param="job_id",
        )
    return job


def job_list(
    *,
    organization: Organization,
    environment: str,
    limit: int,
    starting_after: str | None,
    status: str | None,
) -> tuple[list[Job], bool]:
    """The organization's jobs of `environment`, newest first, `limit` of them after the job
    `starting_after`. Raises 400 `invalid_parameter_type` for a cursor that is no job of the list."""
    queryset = jobs_kept(organization=organization, environment=environment)
    if status:
        queryset = queryset.filter(status=status)
    queryset = queryset.order_by("-created_at", "-id")
    queryset = after_cursor(queryset, starting_after, "job")
    rows = list(queryset[: limit + 1])
    return rows[:limit], len(rows) > limit


@dataclass(frozen=True)
class JobResult:
    """A job's result as GET /v2/jobs/{id}/result answers it: the stored result of a succeeded
    job, or the pages converted so far of a queued or running one (`payload`, the version 1
    result body)."""

    job: Job
    payload: dict[str, Any]

    @property
    def truncated(self) -> bool:
        return bool(self.payload["result_truncated"])

    def markdown(self) -> str:
        """The Markdown answer: each page's Markdown after `<!-- page N -->`."""
        return pages_markdown(self.payload["pages"])

    def body(self) -> dict[str, Any]:
        """The JSON answer: the result body with the job's id, status and billing."""
        job = self.job
        answer = {
            **self.payload,
            "job_id": job.id,
            "status": job.status,
            "request_id": job.request_id,
            "pages_billed": job.pages_billed,
            "credits_billed": job.credits_billed,
            "cached": False,
            "metadata": None,
            "debug": None,
        }
        return dict(JobResultSerializer(answer).data)


def job_result_require(*, job: Job) -> None:
    """Check that the job has a result, or will have one. Raises 409 `job_failed` (its error in
    `details.error`) or `job_canceled`."""
    if job.status == Job.Status.FAILED:
        raise ServiceError(
            ErrorCode.JOB_FAILED,
            f"The job failed ({(job.error or {}).get('code', 'internal_error')}); it has no result.",
            details={"error": job.error or {}},
        )
    if job.status == Job.Status.CANCELED:
        raise ServiceError(ErrorCode.JOB_CANCELED, "The job was canceled; it has no result.")


def job_result_get(*, job: Job) -> JobResult:
    """The job's result: a succeeded job's, read from the store; a queued or running job's pages
    so far. Raises as `job_result_require`."""
    job_result_require(job=job)
    if job.status == Job.Status.SUCCEEDED:
        return JobResult(job, json.loads(job_result_bytes(job=job)))
    pages = list(job_pages_so_far(job=job))
    return JobResult(
        job,
        {
            "engine": {
                "id": (engine_id := job.options.get("engine", engine.ENGINE_ID)),
                "version": engine.ENGINES[engine_id],
            },
            "document": {"page_count": job.page_count, "sha256": job.sha256},
            "pages": pages,
            "markdown": "\n\n".join(p["markdown"] for p in pages if p["markdown"]),
            "result_truncated": False,
            "pages_converted": len(pages),
            "warnings": [],
        },
    )

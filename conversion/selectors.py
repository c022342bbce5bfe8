"""Reads of conversion: version 2 jobs."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.authentication import Caller
from conversion.models import Job
from core.errors import ErrorCode, ServiceError, caller_text
from core.ids import is_id
from core.pagination import after_cursor


def _jobs_of(caller: Caller) -> QuerySet[Job]:
    """The caller's jobs (its organization and environment) that have not expired."""
    return Job.objects.filter(organization=caller.organization, environment=caller.environment).filter(
        Q(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]) | Q(expires_at__gt=timezone.now())
    )


def job_get(*, caller: Caller, job_id: str) -> Job:
    """The caller's job (its organization and environment). Raises 404 `job_not_found`, also for
    a job past its retention that the sweeper has not deleted yet."""
    job = _jobs_of(caller).filter(pk=job_id).first() if is_id(job_id, "job") else None
    if job is None:
        raise ServiceError(
            ErrorCode.JOB_NOT_FOUND,
            f"No job {caller_text(job_id)!r} for this key's organization and environment.",
            param="job_id",
        )
    return job


def job_list(*, caller: Caller, limit: int, starting_after: str | None, status: str | None) -> tuple[list[Job], bool]:
    """The caller's jobs, newest first, `limit` of them after the job `starting_after`."""
    queryset = _jobs_of(caller)
    if status:
        queryset = queryset.filter(status=status)
    queryset = queryset.order_by("-created_at", "-id")
    queryset = after_cursor(queryset, starting_after, "job")
    rows = list(queryset[: limit + 1])
    return rows[:limit], len(rows) > limit

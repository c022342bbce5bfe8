"""Periodic clean-up of conversion state: cached results, old jobs and idempotency bodies
(hourly), and job uploads left in the store (every SVCX_SPOOL_SWEEP_INTERVAL; each host's spool
is swept by conversion.spool)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from conversion.idempotency import idempotency_purge
from conversion.jobs import CACHE_LIFETIME
from conversion.models import CachedResult, ConversionJob
from conversion.store import Store, job_input_discard, objects_older

logger = logging.getLogger("svcx.conversion")


def conversion_housekeeping() -> None:
    now = timezone.now()
    CachedResult.objects.filter(created_at__lt=now - CACHE_LIFETIME).delete()
    old = ConversionJob.objects.filter(created_at__lt=now - timedelta(days=2))
    # A backstop: web and worker delete a job's upload when it ends, unless both died first.
    for alias, key in old.filter(source_store=Store.JOBS).values_list("source_store", "source_key").iterator():
        job_input_discard(alias, key)
    old.delete()
    idempotency_purge()


def job_inputs_sweep() -> int:
    """Delete the job uploads in the store older than SVCX_SPOOL_MAX_AGE, except those of jobs
    still queued or running; returns how many were deleted."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.SVCX_SPOOL_MAX_AGE))
    live = set(
        ConversionJob.objects.filter(
            source_store=Store.JOBS, status__in=[ConversionJob.Status.QUEUED, ConversionJob.Status.RUNNING]
        ).values_list("source_key", flat=True)
    )
    deleted = 0
    for key in list(objects_older(Store.JOBS, cutoff)):
        if key not in live:
            job_input_discard(Store.JOBS, key)
            deleted += 1
    if deleted:
        logger.warning("job inputs sweep deleted %d uploads left in the store", deleted)
    return deleted

"""Periodic clean-up of conversion state."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from conversion.idempotency import idempotency_purge
from conversion.jobs import CACHE_LIFETIME
from conversion.models import CachedResult, ConversionJob
from conversion.store import Store, job_input_discard


def conversion_housekeeping() -> None:
    now = timezone.now()
    CachedResult.objects.filter(created_at__lt=now - CACHE_LIFETIME).delete()
    old = ConversionJob.objects.filter(created_at__lt=now - timedelta(days=2))
    # A backstop: web and worker delete a job's upload when it ends, unless both died first.
    for alias, key in old.filter(source_store=Store.JOBS).values_list("source_store", "source_key").iterator():
        job_input_discard(alias, key)
    old.delete()
    idempotency_purge()

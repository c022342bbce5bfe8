"""Periodic clean-up of conversion state."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from conversion.idempotency import idempotency_purge
from conversion.jobs import CACHE_LIFETIME
from conversion.models import CachedResult, ConversionJob


def conversion_housekeeping() -> None:
    now = timezone.now()
    CachedResult.objects.filter(created_at__lt=now - CACHE_LIFETIME).delete()
    ConversionJob.objects.filter(created_at__lt=now - timedelta(days=2)).delete()
    idempotency_purge()

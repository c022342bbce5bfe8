"""The request log (written per authenticated request) and the usage reporting copy made from it."""

from __future__ import annotations

from datetime import date, datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from billing.models import RequestLog, UsageDaily, UsageRecord, UsageWatermark


def request_log_record(
    *,
    request_id: str,
    organization_id: str,
    environment: str,
    api_key_id: str,
    method: str,
    endpoint: str,
    status: int,
    error_code: str,
    pages: int,
    credits: int,
    client_ip: str | None,
    duration_ms: float,
    created_at: datetime,
) -> None:
    """Write the request's log row: one INSERT on the hot path."""
    row = RequestLog(
        request_id=request_id,
        organization_id=organization_id,
        environment=environment,
        api_key_id=api_key_id,
        method=method,
        endpoint=endpoint[:100],
        status=status,
        error_code=error_code,
        pages=pages,
        credits=credits,
        client_ip=client_ip or None,
        duration_ms=duration_ms,
        created_at=created_at,
    )
    row.save(force_insert=True)


def usage_copy(*, batch: int = 500) -> int:
    """Copy request-log rows not yet copied into usage records and daily totals. Safe to run
    concurrently (rows are claimed with SKIP LOCKED) and to run twice (request ids are unique)."""
    copied = 0
    while True:
        with transaction.atomic():
            rows = list(
                RequestLog.objects.select_for_update(skip_locked=True).filter(copied=False).order_by("id")[:batch]
            )
            if not rows:
                break
            existing = set(
                UsageRecord.objects.filter(request_id__in=[r.request_id for r in rows]).values_list(
                    "request_id", flat=True
                )
            )
            fresh = [r for r in rows if r.request_id not in existing]
            UsageRecord.objects.bulk_create(
                [
                    UsageRecord(
                        organization_id=r.organization_id,
                        environment=r.environment,
                        request_id=r.request_id,
                        api_key_id=r.api_key_id,
                        endpoint=r.endpoint,
                        status=r.status,
                        pages=r.pages,
                        credits=r.credits,
                        created_at=r.created_at,
                    )
                    for r in fresh
                ]
            )
            totals: dict[tuple[str, str, date], list[int]] = {}
            for r in fresh:
                key = (r.organization_id, r.environment, r.created_at.date())
                total = totals.setdefault(key, [0, 0, 0])
                total[0] += 1
                total[1] += r.pages
                total[2] += r.credits
            for (org_id, environment, day), (requests, pages, credits) in totals.items():
                UsageDaily.objects.get_or_create(organization_id=org_id, environment=environment, day=day)
                UsageDaily.objects.filter(organization_id=org_id, environment=environment, day=day).update(
                    requests=F("requests") + requests, pages=F("pages") + pages, credits=F("credits") + credits
                )
            RequestLog.objects.filter(pk__in=[r.pk for r in rows]).update(copied=True)
            copied += len(fresh)
    UsageWatermark.objects.update_or_create(name="usage", defaults={"as_of": timezone.now()})
    return copied

"""The activity report of a key (published when a leak is confirmed)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey
from billing.models import RequestLog
from core.formats import iso

REPORT_DAYS = 90
COLUMNS = ["created_at", "request_id", "method", "endpoint", "status", "error_code", "pages", "credits", "client_ip"]


def key_activity_csv(*, api_key: ApiKey, days: int = REPORT_DAYS) -> str:
    """Every request made with the key in the last `days` days, oldest first, as CSV."""
    since = timezone.now() - timedelta(days=days)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    rows = RequestLog.objects.filter(api_key_id=api_key.id, created_at__gte=since).order_by("created_at")
    for row in rows.iterator(chunk_size=2000):
        writer.writerow(
            [
                iso(row.created_at),
                row.request_id,
                row.method,
                row.endpoint,
                row.status,
                row.error_code,
                row.pages,
                row.credits,
                row.client_ip or "",
            ]
        )
    return out.getvalue()

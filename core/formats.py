"""Wire formats shared by every endpoint."""

from __future__ import annotations

from datetime import UTC, date, datetime, time


def iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with a Z, millisecond precision."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_date(value: date) -> str:
    return datetime.combine(value, time(0), tzinfo=UTC).isoformat().replace("+00:00", "Z")

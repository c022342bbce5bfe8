"""Wire formats shared by every endpoint."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from django.http import QueryDict
from django.utils.dateparse import parse_date, parse_datetime

from core.errors import ErrorCode, ServiceError, caller_text


def iso(value: datetime | None) -> str | None:
    """ISO 8601 UTC with a Z, millisecond precision."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_date(value: date) -> str:
    return datetime.combine(value, time(0), tzinfo=UTC).isoformat().replace("+00:00", "Z")


def refuse_unknown_query(query: QueryDict, allowed: set[str]) -> None:
    for name in query:
        if name not in allowed:
            raise ServiceError(
                ErrorCode.UNKNOWN_PARAMETER,
                f"Unknown query parameter {caller_text(name)!r}; accepted: {', '.join(sorted(allowed)) or 'none'}.",
                param=caller_text(name),
            )


def query_int(query: QueryDict, name: str, *, default: int, minimum: int, maximum: int) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = minimum - 1
    if not minimum <= value <= maximum:
        raise ServiceError(
            ErrorCode.INVALID_PARAMETER_TYPE,
            f"{name} must be an integer from {minimum} to {maximum}, got {caller_text(raw)!r}.",
            param=name,
        )
    return value


def query_timestamp(query: QueryDict, name: str) -> datetime | None:
    """An ISO 8601 timestamp (a bare date means its midnight UTC; no offset means UTC)."""
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    parsed: datetime | None = None
    try:
        parsed = parse_datetime(raw.replace(" ", "+"))
        if parsed is None:
            day = parse_date(raw)
            parsed = datetime.combine(day, time(0)) if day else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise ServiceError(
            ErrorCode.INVALID_PARAMETER_TYPE,
            f"{name} must be an ISO 8601 timestamp such as 2026-01-31T00:00:00Z, got {caller_text(raw)!r}.",
            param=name,
        )
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

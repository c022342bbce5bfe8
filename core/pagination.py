"""Cursor pagination of the lists, newest first (`starting_after` the id of the last row of
the previous page)."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from core.errors import ErrorCode, ServiceError, caller_text
from core.ids import is_id


def after_cursor(queryset: QuerySet, cursor: str | None, prefix: str) -> QuerySet:
    """Rows strictly after `cursor` (an id of this list) in newest-first order.

    Raises 400 `invalid_parameter_type` for a cursor that is no row of the list: a mistyped
    cursor must not look like the end of the list."""
    if not cursor:
        return queryset
    anchor = queryset.filter(pk=cursor).values("created_at", "pk").first() if is_id(cursor, prefix) else None
    if anchor is None:
        raise ServiceError(
            ErrorCode.INVALID_PARAMETER_TYPE,
            f"`starting_after` must be the id of a row of this list ({prefix}_...); "
            f"{caller_text(cursor)!r} is not. Use the `id` of the last row of the previous page.",
            param="starting_after",
        )
    return queryset.filter(
        Q(created_at__lt=anchor["created_at"]) | Q(created_at=anchor["created_at"], pk__lt=anchor["pk"])
    )

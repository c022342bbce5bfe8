"""GET /v1/credits/ledger, GET /v1/usage, GET /v1/usage/records."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import caller_of
from accounts.scopes import ACCOUNT_READ
from billing.ledger import ledger_entry_changes
from billing.models import LedgerEntry, UsageRecord
from billing.selectors import ledger_list, usage_as_of, usage_daily_list, usage_records_list
from core.api import ApiView
from core.errors import ErrorCode
from core.formats import iso
from core.inputs import IntegerParam, QuerySerializer, StringField, TimestampParam, query_of

PAGINATION_PARAMETERS = [
    OpenApiParameter(
        "limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, description="1 to 100 rows."
    ),
    OpenApiParameter("starting_after", OpenApiTypes.STR, description="Id of the last row of the previous page."),
]


def _list_body(rows: list[dict[str, Any]], has_more: bool) -> dict[str, Any]:
    return {"object": "list", "data": rows, "has_more": has_more}


def ledger_row(entry: LedgerEntry) -> dict[str, Any]:
    balance_change, available_change = ledger_entry_changes(entry)
    return {
        "id": entry.id,
        "object": "ledger_entry",
        "created_at": iso(entry.created_at),
        "kind": entry.kind,
        "credits": entry.credits,
        "balance_change": balance_change,
        "available_change": available_change,
        "pages": entry.pages,
        "balance_after": entry.balance_after,
        "request_id": entry.request_id or None,
        "api_key_id": entry.api_key_id or None,
        "reason": entry.reason or None,
    }


def usage_row(record: UsageRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "object": "usage_record",
        "request_id": record.request_id,
        "api_key_id": record.api_key_id,
        "endpoint": record.endpoint,
        "status": record.status,
        "pages": record.pages,
        "credits": record.credits,
        "created_at": iso(record.created_at),
    }


LedgerList = inline_serializer(
    "LedgerList",
    {
        "object": serializers.CharField(default="list"),
        "has_more": serializers.BooleanField(),
        "data": inline_serializer(
            "LedgerEntry",
            {
                "id": serializers.CharField(),
                "object": serializers.CharField(default="ledger_entry"),
                "created_at": serializers.DateTimeField(),
                "kind": serializers.ChoiceField(LedgerEntry.Kind.values),
                "credits": serializers.IntegerField(
                    help_text="Signed credits of the movement: holds and captures are negative, releases positive. "
                    "A conversion appears as a hold and a capture of the same credits: do not sum this column "
                    "to get what was spent; sum `balance_change` (or `available_change`)."
                ),
                "balance_change": serializers.IntegerField(
                    help_text="What the row changed `balance` by: grants, refunds, adjustments and captures; 0 "
                    "for holds and releases. The sum over a statement is the change of balance."
                ),
                "available_change": serializers.IntegerField(
                    help_text="What the row changed `available` (= balance - held) by: a hold lowers it, a release "
                    "gives it back, a capture leaves it (the hold already lowered it)."
                ),
                "pages": serializers.IntegerField(help_text="Pages the movement is for (test keys: test allowance)."),
                "balance_after": serializers.IntegerField(help_text="The balance after this row."),
                "request_id": serializers.CharField(allow_null=True),
                "api_key_id": serializers.CharField(allow_null=True),
                "reason": serializers.CharField(allow_null=True, help_text="Why staff granted or adjusted."),
            },
            many=True,
        ),
    },
)


class PageQuery(QuerySerializer):
    """A page of a list, newest first: `limit` (1-100, default 20) after `starting_after`."""

    limit = IntegerParam(minimum=1, maximum=100, default=20)
    starting_after = StringField(required=False)


class PeriodQuery(QuerySerializer):
    """`start` and `end` (ISO 8601; a bare date is its midnight UTC)."""

    start = TimestampParam(required=False)
    end = TimestampParam(required=False)


class UsageRecordQuery(PageQuery, PeriodQuery):
    api_key_id = StringField(required=False)


class LedgerApi(ApiView):
    """The credit ledger of the key's organization and environment, newest first. The ledger
    is the authoritative record of every credit movement."""

    required_scope = ACCOUNT_READ
    error_codes = (ErrorCode.UNKNOWN_PARAMETER, ErrorCode.INVALID_PARAMETER_TYPE)

    @extend_schema(summary="List ledger entries", parameters=PAGINATION_PARAMETERS, responses={200: LedgerList})
    def get(self, request: Request) -> Response:
        query = query_of(request, PageQuery)
        caller = caller_of(request)
        rows, has_more = ledger_list(
            organization=caller.organization,
            environment=caller.environment,
            limit=query["limit"],
            starting_after=query.get("starting_after"),
        )
        return Response(_list_body([ledger_row(r) for r in rows], has_more))


UsageRecordList = inline_serializer(
    "UsageRecordList",
    {
        "object": serializers.CharField(default="list"),
        "has_more": serializers.BooleanField(),
        "data": inline_serializer(
            "UsageRecord",
            {
                "object": serializers.CharField(default="usage_record"),
                "id": serializers.CharField(),
                "request_id": serializers.CharField(),
                "api_key_id": serializers.CharField(),
                "endpoint": serializers.CharField(),
                "status": serializers.IntegerField(),
                "pages": serializers.IntegerField(),
                "credits": serializers.IntegerField(),
                "created_at": serializers.DateTimeField(),
            },
            many=True,
        ),
    },
)


class UsageRecordsApi(ApiView):
    """Usage records (one per request), newest first, from the reporting copy, which can lag
    the ledger by a few seconds."""

    required_scope = ACCOUNT_READ
    error_codes = (ErrorCode.UNKNOWN_PARAMETER, ErrorCode.INVALID_PARAMETER_TYPE)

    @extend_schema(
        summary="List usage records",
        parameters=[
            *PAGINATION_PARAMETERS,
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="Records created at or after (ISO 8601 UTC)."),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="Records created before (ISO 8601 UTC)."),
            OpenApiParameter("api_key_id", OpenApiTypes.STR, description="Only records of this key."),
        ],
        responses={200: UsageRecordList},
    )
    def get(self, request: Request) -> Response:
        query = query_of(request, UsageRecordQuery)
        caller = caller_of(request)
        rows, has_more = usage_records_list(
            organization=caller.organization,
            environment=caller.environment,
            limit=query["limit"],
            starting_after=query.get("starting_after"),
            start=query.get("start"),
            end=query.get("end"),
            api_key_id=query.get("api_key_id"),
        )
        return Response(_list_body([usage_row(r) for r in rows], has_more))


UsageSummary = inline_serializer(
    "UsageSummary",
    {
        "object": serializers.CharField(default="usage"),
        "as_of": serializers.DateTimeField(allow_null=True),
        "data": inline_serializer(
            "UsageDay",
            {
                "date": serializers.DateField(),
                "requests": serializers.IntegerField(),
                "pages": serializers.IntegerField(),
                "credits": serializers.IntegerField(),
            },
            many=True,
        ),
    },
)


class UsageApi(ApiView):
    """Daily totals (requests, pages, credits) of the reporting copy, newest day first, and the
    time the copy is up to date as of."""

    required_scope = ACCOUNT_READ
    error_codes = (ErrorCode.UNKNOWN_PARAMETER, ErrorCode.INVALID_PARAMETER_TYPE)

    @extend_schema(
        summary="Usage totals by day",
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="First day (ISO 8601)."),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="Last day (ISO 8601)."),
        ],
        responses={200: UsageSummary},
    )
    def get(self, request: Request) -> Response:
        query = query_of(request, PeriodQuery)
        start, end = query.get("start"), query.get("end")
        caller = caller_of(request)
        days = usage_daily_list(
            organization=caller.organization,
            environment=caller.environment,
            start=start.date() if start else None,
            end=end.date() if end else None,
        )
        return Response(
            {
                "object": "usage",
                "as_of": iso(usage_as_of()),
                "data": [
                    {"date": d.day.isoformat(), "requests": d.requests, "pages": d.pages, "credits": d.credits}
                    for d in days
                ],
            }
        )

"""GET /v1/account, GET /v1/credits/ledger, GET /v1/usage, GET /v1/usage/records."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import caller_of
from accounts.scopes import ACCOUNT_READ
from billing.limits import limits_of
from billing.selectors import (
    allowance_get,
    credits_get,
    ledger_list,
    usage_as_of,
    usage_daily_list,
    usage_records_list,
)
from billing.serializers import (
    AccountSerializer,
    LedgerListSerializer,
    UsageRecordListSerializer,
    UsageSummarySerializer,
)
from core.api import ApiView
from core.errors import ErrorCode
from core.handlers import request_id_of
from core.inputs import IntegerParam, NoQuery, QuerySerializer, StringField, TimestampParam, query_of
from core.serializers import ListPage

PAGINATION_PARAMETERS = [
    OpenApiParameter(
        "limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}, description="1 to 100 rows."
    ),
    OpenApiParameter("starting_after", OpenApiTypes.STR, description="Id of the last row of the previous page."),
]


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


class AccountApi(ApiView):
    """The calling key's organization: status, credits of the key's environment, the test
    allowance and the limits in force."""

    required_scope = ACCOUNT_READ

    @extend_schema(summary="Read the account", responses={200: AccountSerializer})
    def get(self, request: Request) -> Response:
        query_of(request, NoQuery)
        caller = caller_of(request)
        organization = caller.organization
        answer = {
            "organization": organization,
            "caller": caller,
            "credits": credits_get(organization=organization, environment=caller.environment),
            "test_allowance": allowance_get(organization=organization),
            "limits": limits_of(organization),
            "request_id": request_id_of(request),
        }
        return Response(AccountSerializer(answer).data)


class LedgerApi(ApiView):
    """The credit ledger of the key's organization and environment, newest first. The ledger
    is the authoritative record of every credit movement."""

    required_scope = ACCOUNT_READ
    error_codes = (ErrorCode.UNKNOWN_PARAMETER, ErrorCode.INVALID_PARAMETER_TYPE)

    @extend_schema(
        summary="List ledger entries", parameters=PAGINATION_PARAMETERS, responses={200: LedgerListSerializer}
    )
    def get(self, request: Request) -> Response:
        query = query_of(request, PageQuery)
        caller = caller_of(request)
        rows, has_more = ledger_list(
            organization=caller.organization,
            environment=caller.environment,
            limit=query["limit"],
            starting_after=query.get("starting_after"),
        )
        return Response(LedgerListSerializer(ListPage(rows, has_more)).data)


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
        responses={200: UsageRecordListSerializer},
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
        return Response(UsageRecordListSerializer(ListPage(rows, has_more)).data)


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
        responses={200: UsageSummarySerializer},
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
        return Response(UsageSummarySerializer({"as_of": usage_as_of(), "data": days}).data)

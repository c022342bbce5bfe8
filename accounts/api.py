"""GET /v1/account."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import caller_of
from accounts.keyformat import Environment
from accounts.scopes import ACCOUNT_READ
from billing.limits import limits_of
from billing.selectors import allowance_get, credits_get
from core.api import ApiView
from core.formats import iso, iso_date
from core.inputs import NoQuery, query_of

AccountSerializer = inline_serializer(
    "Account",
    {
        "object": serializers.CharField(default="account"),
        "id": serializers.CharField(help_text="Organization id, org_..."),
        "name": serializers.CharField(),
        "status": serializers.ChoiceField(["active", "suspended", "delinquent"]),
        "environment": serializers.ChoiceField(
            [e.value for e in Environment], help_text="Environment of the calling key."
        ),
        "api_key_id": serializers.CharField(),
        "credits": inline_serializer(
            "AccountCredits",
            {
                "balance": serializers.IntegerField(),
                "held": serializers.IntegerField(),
                "available": serializers.IntegerField(),
            },
        ),
        "test_allowance": inline_serializer(
            "TestAllowance",
            {
                "limit": serializers.IntegerField(),
                "used": serializers.IntegerField(),
                "held": serializers.IntegerField(),
                "resets_at": serializers.DateTimeField(),
            },
        ),
        "limits": serializers.DictField(child=serializers.IntegerField()),
        "debug_policy": serializers.ChoiceField(["enabled", "disabled"]),
        "created_at": serializers.DateTimeField(),
        "request_id": serializers.CharField(),
    },
)


class AccountApi(ApiView):
    """The calling key's organization: status, credits of the key's environment, the test
    allowance and the limits in force."""

    required_scope = ACCOUNT_READ

    @extend_schema(summary="Read the account", responses={200: AccountSerializer})
    def get(self, request: Request) -> Response:
        query_of(request, NoQuery)
        caller = caller_of(request)
        organization = caller.organization
        credits = credits_get(organization=organization, environment=caller.environment)
        allowance = allowance_get(organization=organization)
        return Response(
            {
                "object": "account",
                "id": organization.id,
                "name": organization.name,
                "status": organization.status,
                "environment": caller.environment,
                "api_key_id": caller.key_id,
                "credits": {"balance": credits.balance, "held": credits.held, "available": credits.available},
                "test_allowance": {
                    "limit": allowance.limit,
                    "used": allowance.used,
                    "held": allowance.held,
                    "resets_at": iso_date(allowance.resets_at),
                },
                "limits": limits_of(organization),
                "debug_policy": organization.debug_policy,
                "created_at": iso(organization.created_at),
            }
        )

"""GET /v1/account."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import caller_of
from accounts.scopes import ACCOUNT_READ
from accounts.serializers import AccountSerializer
from billing.limits import limits_of
from billing.selectors import allowance_get, credits_get
from core.api import ApiView
from core.handlers import request_id_of
from core.inputs import NoQuery, query_of


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

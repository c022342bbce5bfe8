"""A URLconf for tests of the error machinery: the real routes plus views that fail on purpose."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import SuspiciousOperation
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import caller_of
from conversion.requests import IdempotentApi
from core.api import ApiView
from svcx.urls import urlpatterns as real_urlpatterns


def plain_crash(request: HttpRequest) -> HttpResponse:
    raise ValueError("/srv/secret/path.py: SELECT * FROM accounts_apikey")


def plain_suspicious(request: HttpRequest) -> HttpResponse:
    raise SuspiciousOperation("bad host header")


class CrashApi(ApiView):
    """Fails inside a DRF view."""

    authenticated = False
    authentication_classes = []
    permission_classes = []

    def get(self, request: Request) -> Response:
        raise RuntimeError("db.internal.example:5432 connection string")


class DatabaseDownApi(ApiView):
    """Fails as if the database were unreachable."""

    authenticated = False
    authentication_classes = []
    permission_classes = []

    def get(self, request: Request) -> Response:
        raise OperationalError("could not connect to server at 10.0.0.5")


class NulQueryApi(ApiView):
    """Lets a NUL character reach the database, as a missed input check would."""

    authenticated = False
    authentication_classes = []
    permission_classes = []

    def get(self, request: Request) -> Response:
        from accounts.models import ApiKey

        return Response({"found": ApiKey.objects.filter(name="a\x00b").exists()})


class EchoApi(ApiView):
    """Parses a JSON body."""

    authenticated = False
    authentication_classes = []
    permission_classes = []

    parser_classes = [JSONParser]

    def post(self, request: Request) -> Response:
        return Response({"echo": request.data})


urlpatterns: list[Any] = [
    path("v1/test/plain-crash", plain_crash),
    path("v1/test/suspicious", plain_suspicious),
    path("v1/test/crash", CrashApi.as_view()),
    path("v1/test/db-down", DatabaseDownApi.as_view()),
    path("v1/test/echo", EchoApi.as_view()),
    path("v1/test/nul", NulQueryApi.as_view()),
    *real_urlpatterns,
]


class WhoAmIApi(ApiView):
    """Any valid key; answers who is calling without touching the database."""

    def get(self, request: Request) -> Response:
        caller = caller_of(request)
        return Response({"org": caller.org_id, "key": caller.key_id, "environment": caller.environment})


class SpendApi(ApiView):
    """Stands for an endpoint that spends credits (refused while spending is frozen)."""

    required_scope = "convert"
    spends_credits = True

    def post(self, request: Request) -> Response:
        return Response({"spent": True})


class UnrenderableApi(IdempotentApi):
    """Takes an Idempotency-Key like every POST, then answers with data that cannot be encoded."""

    required_scope = "convert"

    def post(self, request: Request) -> Response | HttpResponse:
        response: Response | HttpResponse = self.idempotent(
            request, lambda body: Response({"text": "\ud800"}), limit=1024
        )
        return response


urlpatterns = [
    path("v1/test/whoami", WhoAmIApi.as_view()),
    path("v1/test/spend", SpendApi.as_view()),
    path("v1/test/unrenderable", UnrenderableApi.as_view()),
    *urlpatterns,
]

"""The service's own endpoints: health, the OpenAPI document, the error documentation pages,
and the answer for any route that does not exist."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts import keyformat
from conversion.options import offered_engines
from core.api import ApiView
from core.errors import CATALOGUE, ErrorCode, ServiceError, caller_text, error_code
from core.handlers import error_response, for_a_person, person_error_page, request_id_of
from svcx.guides import guide_get, guide_list
from svcx.health import health_checks
from svcx.serializers import HealthSerializer


class HealthApi(ApiView):
    """Whether the service can take work: the database, Redis and at least one worker answer.

    200 when all are up; otherwise 503 `service_unavailable` whose `details.checks` names what
    is down. No key is needed; an `Authorization` header is ignored.
    """

    authenticated = False
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    error_codes = (ErrorCode.SERVICE_UNAVAILABLE,)

    @extend_schema(
        summary="Health check",
        responses={200: HealthSerializer},
    )
    def get(self, request: Request) -> Response:
        checks = health_checks()
        down = [name for name, state in checks.items() if not state["ok"]]
        if down:
            raise ServiceError(
                ErrorCode.SERVICE_UNAVAILABLE,
                f"Down: {', '.join(down)}. Retry after the Retry-After interval.",
                details={"checks": checks},
                retry_after_ms=5000,
            )
        return Response(HealthSerializer({"status": "ok", "checks": checks, "request_id": request_id_of(request)}).data)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI description served at /v1/openapi.json, generated once per process and set
    of engines offered (the settings that offer them are read at each request)."""
    return _openapi_document(tuple(offered_engines()))


@cache
def _openapi_document(offered: tuple[str, ...]) -> dict[str, Any]:
    # `offered` keys the cache: the document lists the engines offered (`offered_engines_only`).
    return SchemaGenerator().get_schema(request=None, public=True)


class OpenApiApi(ApiView):
    """The OpenAPI 3 description of every endpoint, generated from the code. No key is needed."""

    authenticated = False
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    @extend_schema(summary="OpenAPI description", responses={200: {"type": "object"}})
    def get(self, request: Request) -> Response:
        return Response(openapi_document())

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        # The document is OpenAPI, where a top-level request_id would be invalid: the id is in the header.
        return super(ApiView, self).finalize_response(request, response, *args, **kwargs)


@csrf_exempt
def person_entry(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """`/` and `/login/`: a person opening them is sent to the console; any other method is
    404 `unknown_endpoint` like every path outside the routes."""
    if request.method not in ("GET", "HEAD"):
        return unknown_endpoint(request)
    return redirect("/console/" if request.path == "/" else "/console/sign-in/")


@csrf_exempt
def unknown_endpoint(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Any path no route matches: 404 `unknown_endpoint`, whatever the method (an HTML page
    under the console)."""
    path = request.path
    if for_a_person(request):
        return person_error_page(Http404(), request)
    shown = caller_text(keyformat.redacted(path))  # a key pasted into the path is not echoed
    message = f"No endpoint {shown} exists. Every route lives under /v1; see /v1/openapi.json."
    if path.endswith("/") and len(path) > 1:
        try:
            resolved = resolve(path.rstrip("/"))
        except Resolver404:
            resolved = None
        if resolved is not None and resolved.func is not unknown_endpoint:
            message = f"No endpoint {shown} exists; remove the trailing slash."
    return error_response(ServiceError(ErrorCode.UNKNOWN_ENDPOINT, message), request)


_FAVICON = Path(__file__).resolve().parent / "static" / "svcx" / "favicon.ico"


def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask every site for: the service's icon, cached a day."""
    response = HttpResponse(_FAVICON.read_bytes(), content_type="image/x-icon")
    response["Cache-Control"] = "public, max-age=86400"
    return response


def docs_index(request: HttpRequest) -> HttpResponse:
    codes = sorted(CATALOGUE.values(), key=lambda spec: (spec.status, spec.code))
    return render(request, "svcx/docs_index.html", {"codes": codes, "guides": guide_list()})


def docs_guide(request: HttpRequest, slug: str) -> HttpResponse:
    guide = guide_get(slug)
    if guide is None:
        return error_response(
            ServiceError(ErrorCode.UNKNOWN_ENDPOINT, f"No guide {caller_text(slug)!r}; /docs/ lists them."), request
        )
    return render(request, "svcx/docs_guide.html", {"guide": guide, "guides": guide_list()})


def docs_error(request: HttpRequest, code: str) -> HttpResponse:
    spec = CATALOGUE.get(known) if (known := error_code(code)) else None
    if spec is None:
        return error_response(
            ServiceError(
                ErrorCode.UNKNOWN_ENDPOINT, f"No documentation page for error code {caller_text(code)!r}; see /docs/."
            ),
            request,
        )
    return render(request, "svcx/docs_error.html", {"spec": spec})

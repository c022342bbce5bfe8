"""The base of every /v1 view: method check before authentication, JSON unless the view offers
more (its renderers and negotiation class), request ids in bodies, the error codes each endpoint
declares for the OpenAPI description, and the steps every authenticated request passes.

The core imports no app, so the apps plug their part in through settings, the way DRF takes
its authentication classes: `REST_FRAMEWORK`'s default authentication and permission classes
(the API key and the caller's scopes) and `SVCX_API_STEPS`, each a class with

- `admit(request)`: after authentication, for a request without a body (GET, HEAD); requests
  with a body are admitted by `conversion.requests.IdempotentApi` once they are known not to
  replay an Idempotency-Key, so a replay counts against no meter;
- `finish(request, response)`: on every answer, in order (the RateLimit headers, then storing
  the answer under the request's Idempotency-Key).
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar, Protocol

from django.conf import settings
from django.http import HttpResponse
from django.utils.module_loading import import_string
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ErrorCode, ServiceError
from core.handlers import request_id_of


class ApiStep(Protocol):
    def admit(self, request: Request) -> None: ...

    def finish(self, request: Request, response: HttpResponse) -> None: ...


@cache
def api_steps() -> tuple[ApiStep, ...]:
    return tuple(import_string(path)() for path in settings.SVCX_API_STEPS)


class ApiView(APIView):
    """Base class of every /v1 endpoint.

    - A method the view does not implement is 405 `method_not_allowed` with `Allow`, decided
      before authentication, so probing with a wrong method reveals nothing else.
    - OPTIONS is never answered (CORS preflight is refused on authenticated endpoints); the
      CORS-open endpoints are answered by the CORS middleware before they reach a view.
    - Every JSON object body gets the request's `request_id`.
    """

    # The scope the endpoint requires (None: any valid key), and whether it spends credits
    # (refused while the organization's spending is frozen); read by the permission class.
    required_scope: ClassVar[str | None] = None
    # Per-method scopes, where one path serves methods of different scopes.
    method_scopes: ClassVar[dict[str, str]] = {}
    spends_credits: ClassVar[bool] = False
    # Error codes this endpoint can return beyond the ones every authenticated endpoint shares;
    # read by the OpenAPI generator.
    error_codes: ClassVar[tuple[ErrorCode, ...]] = ()
    # Whether the endpoint takes an API key (health and the OpenAPI document do not).
    authenticated: ClassVar[bool] = True

    @property
    def allowed_methods(self) -> list[str]:
        methods = [m.upper() for m in self.http_method_names if m not in ("options", "head") and hasattr(self, m)]
        if "GET" in methods and "HEAD" not in methods:
            methods.append("HEAD")
        return methods

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method not in self.allowed_methods:
            raise ServiceError(
                ErrorCode.METHOD_NOT_ALLOWED,
                f"{request.method} is not allowed on {request.path}; use {', '.join(self.allowed_methods)}.",
                headers={"Allow": ", ".join(self.allowed_methods)},
            )
        self._unacceptable: ServiceError | None = None
        super().initial(request, *args, **kwargs)
        if self._unacceptable is not None:
            raise self._unacceptable
        if self.authenticated and request.method in ("GET", "HEAD"):
            for step in api_steps():
                step.admit(request)

    def perform_content_negotiation(self, request: Request, force: bool = False) -> tuple[BaseRenderer, str]:
        """The renderer `Accept` asks for. DRF negotiates before authentication; a 406 waits
        until the caller and its scope are checked, as every refusal of what the request asks."""
        try:
            return super().perform_content_negotiation(request, force)
        except ServiceError as exc:
            self._unacceptable = exc
            renderer = self.get_renderers()[0]
            return (renderer, renderer.media_type)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(response, Response) and isinstance(response.data, dict):
            if "error" in response.data:
                # The envelope is JSON whatever renderer the answer would have had.
                renderer = self.get_renderers()[0]
                request.accepted_renderer, request.accepted_media_type = renderer, renderer.media_type
            else:
                response.data.setdefault("request_id", request_id_of(request))
        response = super().finalize_response(request, response, *args, **kwargs)
        if not response.has_header("X-Request-Id"):
            response["X-Request-Id"] = request_id_of(request)
        for step in api_steps():
            step.finish(request, response)
        return response

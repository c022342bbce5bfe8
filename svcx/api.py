"""The base of every /v1 view: method check before authentication, JSON only, request ids in
bodies, and the error codes each endpoint declares for the OpenAPI description."""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import ApiKeyAuthentication, CallerPolicy, caller_of
from billing.meters import rate_limit_headers
from conversion.idempotency import idempotency_finish, idempotency_release
from svcx.errors import ErrorCode, ServiceError
from svcx.gate import request_gate
from svcx.handlers import request_id_of


class ApiView(APIView):
    """Base class of every /v1 endpoint.

    - A method the view does not implement is 405 `method_not_allowed` with `Allow`, decided
      before authentication, so probing with a wrong method reveals nothing else.
    - OPTIONS is never answered (CORS preflight is refused on authenticated endpoints); the
      CORS-open endpoints are answered by the CORS middleware before they reach a view.
    - Every JSON object body gets the request's `request_id`.
    """

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [CallerPolicy]
    # The scope the endpoint requires (None: any valid key), and whether it spends credits
    # (refused while the organization's spending is frozen).
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
        super().initial(request, *args, **kwargs)
        if self.authenticated and request.method in ("GET", "HEAD"):
            # Requests with a body pass the gate after their idempotency check (a replay counts
            # against no meter): see conversion.requests.idempotent_body.
            request_gate(request._request, caller_of(request))

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(response, Response) and isinstance(response.data, dict) and "error" not in response.data:
            response.data.setdefault("request_id", request_id_of(request))
        response = super().finalize_response(request, response, *args, **kwargs)
        if not response.has_header("X-Request-Id"):
            response["X-Request-Id"] = request_id_of(request)
        for name, value in rate_limit_headers(request._request).items():
            if not response.has_header(name):
                response[name] = value
        claim = getattr(request._request, "svcx_idempotency_claim", None)
        if claim is not None:
            try:
                if isinstance(response, Response):
                    response.render()
            except Exception:
                idempotency_release(claim)  # the answer is a 500: retryable, never stored
                raise
            idempotency_finish(claim, response)
        return response

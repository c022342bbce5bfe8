"""What the service learns about a request while it handles it, kept in one typed object
instead of attributes stuck on Django's HttpRequest.

The request-id middleware creates the context first; authentication names the caller, the
meters record their states for the RateLimit headers, the idempotency step leaves its claim for
the base view to settle, and the convert view writes the usage the request log reads.
`context_of` works on Django's and DRF's request alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest
from rest_framework.request import Request

_ATTRIBUTE = "_svcx_context"


@dataclass
class Usage:
    """What the request billed (read by the request log, which records an error answer as
    billing nothing). `captured`: the credits were captured, so the view that captured them
    refunds them when its answer becomes an error after all."""

    pages: int = 0
    credits: int = 0
    captured: bool = False


@dataclass
class RequestContext:
    request_id: str = ""
    started_monotonic: float = 0.0
    # The authenticated caller (accounts.authentication.Caller); None until a key is accepted.
    # Typed loosely here: the core imports no app; accounts.authentication.caller_of is typed.
    caller: Any = None
    usage: Usage | None = None
    # Meter name -> its state after this request (billing.meters.MeterState), for the headers.
    meters: dict[str, Any] = field(default_factory=dict)
    # A first attempt's Idempotency-Key claim (conversion.idempotency.Claim), settled by the
    # API base view once the answer is rendered.
    idempotency_claim: Any = None


def context_of(request: HttpRequest | Request) -> RequestContext:
    """The request's context, created on first use."""
    raw: HttpRequest = request._request if isinstance(request, Request) else request
    context = raw.__dict__.get(_ATTRIBUTE)
    if context is None:
        context = RequestContext()
        setattr(raw, _ATTRIBUTE, context)
    return context

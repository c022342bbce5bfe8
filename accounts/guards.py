"""Per-address limits for the pages that take a secret without an API key: the admin login and
the single-use key reveal. A password or a reveal token cannot be guessed at speed from one
address; API calls are metered per organization instead (billing.meters)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django_ratelimit.decorators import ratelimit

from accounts.authentication import client_ip
from core.errors import ErrorCode, ServiceError

WINDOW_SECONDS = 60


class TooManyAttempts(ServiceError):
    """Raised by django-ratelimit (RATELIMIT_EXCEPTION_CLASS) when an address is over its limit."""

    def __init__(self) -> None:
        super().__init__(
            ErrorCode.RATE_LIMIT_REQUESTS,
            "Too many attempts from this address. Wait a minute, then try again.",
            retry_after_ms=WINDOW_SECONDS * 1000,
            details={"meter": "attempts_per_address"},
        )


def _address(group: str, request: HttpRequest) -> str:
    """The client's address; an IPv6 client is counted by its /64, which one subscriber holds
    whole (a fresh address per attempt must not mean a fresh allowance)."""
    address = client_ip(request)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def per_address(setting: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Limit POSTs to the view to `settings.<setting>` per minute per client address."""

    def rate(group: str, request: HttpRequest) -> str:
        return f"{getattr(settings, setting)}/m"

    def decorate(view: Callable[..., Any]) -> Callable[..., HttpResponse]:
        limited: Callable[..., HttpResponse] = ratelimit(key=_address, rate=rate, method="POST", block=True)(view)
        return limited

    return decorate

"""Per-address limits for the pages that take a secret without an API key: the admin login and
the single-use key reveal. A password or a reveal token cannot be guessed at speed from one
address; API calls are metered per organization instead (billing.meters). Failed sign-ins are
also counted per e-mail address, so one account cannot be guessed from many addresses.
Both count in django-ratelimit's cache."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django_ratelimit import ALL
from django_ratelimit.core import _get_window, _make_cache_key, get_usage
from django_ratelimit.decorators import ratelimit

from accounts.authentication import client_ip
from core.errors import ErrorCode, ServiceError

WINDOW_SECONDS = 60


class TooManyAttempts(ServiceError):
    """Raised by django-ratelimit (RATELIMIT_EXCEPTION_CLASS) when an address is over its limit."""

    def __init__(
        self,
        message: str = "Too many attempts from this address. Wait a minute, then try again.",
        *,
        retry_after_seconds: int = WINDOW_SECONDS,
        meter: str = "attempts_per_address",
    ) -> None:
        super().__init__(
            ErrorCode.RATE_LIMIT_REQUESTS,
            message,
            retry_after_ms=retry_after_seconds * 1000,
            details={"meter": meter},
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


SIGN_IN_FAILURES_GROUP = "accounts.sign_in_failures_per_email"


def _failures_rate() -> tuple[int, int]:
    return (settings.SVCX_LOGIN_FAILURES_PER_EMAIL, settings.SVCX_LOGIN_FAILURES_WINDOW)


def _counted(email: str) -> str:
    return email.strip().lower()  # OLGA@x.test and " olga@x.test " are one account's guesses


def _sign_in_failures(request: HttpRequest, email: str, *, increment: bool) -> dict[str, Any] | None:
    """django-ratelimit's usage of the address's failure counter (fixed windows of
    SVCX_LOGIN_FAILURES_WINDOW seconds), incremented or only read; None when RATELIMIT_ENABLE
    is off."""
    address = _counted(email)
    usage: dict[str, Any] | None = get_usage(
        request, group=SIGN_IN_FAILURES_GROUP, key=lambda *_: address, rate=_failures_rate(), increment=increment
    )
    return usage


def sign_in_failures_check(request: HttpRequest, *, email: str) -> None:
    """Refuse a sign-in for `email` while it has SVCX_LOGIN_FAILURES_PER_EMAIL failures in the
    current window, before any password is checked. The answer is the same whether or not an
    account has the address.

    Raises TooManyAttempts (429) naming how long to wait."""
    usage = _sign_in_failures(request, email, increment=False)
    # A cache that fails reads as limit 0: refused, as django-ratelimit's own decorator does.
    if usage is not None and usage["count"] >= usage["limit"]:
        wait = max(int(usage["time_left"]), 1)
        minutes = math.ceil(wait / 60)
        raise TooManyAttempts(
            f"Too many failed sign-ins for this e-mail address. Wait {minutes} minute"
            f"{'s' if minutes != 1 else ''}, then try again.",
            retry_after_seconds=wait,
            meter="sign_in_failures_per_email",
        )


def sign_in_failure_record(request: HttpRequest, *, email: str) -> None:
    """Count one failed sign-in (a wrong password, or no such account) against `email`."""
    _sign_in_failures(request, email, increment=True)


def sign_in_failures_clear(*, email: str) -> None:
    """Forget the failed sign-ins counted against `email` in the current window: its owner has
    just proved the address (a completed password reset), so whoever ran the count up cannot
    keep them out. The counter's key is django-ratelimit's own (`get_usage` computes it the same
    way; tests/console/test_sessions.py fails if a new version computes it otherwise)."""
    address = _counted(email)
    rate = _failures_rate()
    key = _make_cache_key(SIGN_IN_FAILURES_GROUP, _get_window(address, rate[1]), rate, address, ALL)
    caches[getattr(settings, "RATELIMIT_USE_CACHE", "default")].delete(key)

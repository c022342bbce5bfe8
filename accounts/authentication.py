"""Authentication of /v1 requests by API key, and the per-request policy checks that follow it.

Per request: an offline format and checksum check, then one indexed query (key by its HMAC,
joined with its organization and replacement). Nothing is cached, so a revocation or a
suspension is seen by every web process on its very next request, and scope, expiry and
allowlist changes as well (the specification allows those up to 10 seconds).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from accounts import keyformat
from accounts.keyformat import Environment
from accounts.models import ApiKey, Organization
from accounts.scopes import effective_scopes
from accounts.secrets import key_hash
from core.context import context_of
from core.errors import ErrorCode, ServiceError, caller_text

WWW_AUTHENTICATE = 'Bearer realm="svcx", error="invalid_token"'
LAST_USED_RESOLUTION = timedelta(seconds=60)


@dataclass(frozen=True)
class Caller:
    """Who is calling: the key, its organization and environment, the scopes it grants."""

    api_key: ApiKey
    organization: Organization
    scopes: frozenset[str] = field(default_factory=frozenset)

    @property
    def environment(self) -> str:
        return self.api_key.environment

    @property
    def org_id(self) -> str:
        return self.organization.id

    @property
    def key_id(self) -> str:
        return self.api_key.id

    @property
    def is_test(self) -> bool:
        return self.api_key.environment == Environment.TEST


def caller_of(request: Request) -> Caller:
    """The authenticated caller of a request that passed ApiKeyAuthentication."""
    caller = request.auth
    if not isinstance(caller, Caller):
        raise TypeError("the request was not authenticated with an API key")
    return caller


def _key_sent_elsewhere(request: HttpRequest) -> str | None:
    """Where a key was sent other than the Authorization header, to say so in the 401."""
    prefix = keyformat.ISSUER + keyformat.SECRET_TYPE
    if prefix in request.path:  # `GET /v1/files/<key>`: the access log keeps it masked
        return "the URL path"
    for name, value in request.GET.lists():
        if any(v.strip().startswith(prefix) for v in value):
            return f"the query parameter {caller_text(name[:40])!r}"
    for name, value in request.META.items():
        if name.startswith("HTTP_") and name != "HTTP_AUTHORIZATION" and str(value).strip().startswith(prefix):
            return "the header " + name[5:].replace("_", "-").title()[:40]
    return None


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer <API_KEY>` and nothing else."""

    def authenticate(self, request: Request) -> tuple[Caller, Caller]:
        # A key anywhere but the Authorization header is refused even beside a valid one: the
        # client must learn that it leaked a key into a URL or a log, not have it ignored.
        elsewhere = _key_sent_elsewhere(request._request)
        if elsewhere:
            raise ServiceError(
                ErrorCode.MISSING_API_KEY,
                f"An API key was sent in {elsewhere}; keys are read only from the header "
                "`Authorization: Bearer <API_KEY>`. Treat a key sent in a URL as exposed and rotate it.",
            )
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, credential = header.strip().partition(" ")
        credential = credential.strip()
        if scheme.lower() != "bearer" or not credential:
            raise ServiceError(
                ErrorCode.MISSING_API_KEY, "Send your API key in the header `Authorization: Bearer <API_KEY>`."
            )
        try:
            keyformat.parse(credential)
        except keyformat.KeyFormatError as exc:
            if exc.console_token:
                raise ServiceError(
                    ErrorCode.INVALID_API_KEY,
                    "Console session tokens (svcx_cs_...) are not API keys. Create an API key and send that.",
                ) from None
            raise ServiceError(ErrorCode.INVALID_API_KEY, f"The API key is malformed: {exc}.") from None
        api_key = (
            # The replacement is read only for an expired key's message (one more query then).
            ApiKey.objects.select_related("organization")
            .filter(key_hash=key_hash(credential))
            .order_by()  # one unique row: no sort
            .first()
        )
        if api_key is None:
            raise ServiceError(
                ErrorCode.INVALID_API_KEY, "The API key is not known. Check that you copied the whole key."
            )
        now = timezone.now()
        if api_key.revoked_at is not None:
            raise ServiceError(
                ErrorCode.REVOKED_API_KEY, f"The API key {api_key.hint} was revoked; revocation is permanent."
            )
        if api_key.expires_at is not None and api_key.expires_at <= now:
            replacement = api_key.replaced_by
            if replacement is not None:
                message = f"The API key {api_key.hint} has expired; use its replacement {replacement.hint}."
            else:
                message = f"The API key {api_key.hint} has expired; create a new key."
            raise ServiceError(
                ErrorCode.EXPIRED_API_KEY,
                message,
                details={"replacement_hint": replacement.hint if replacement is not None else None},
            )
        if api_key.last_used_at is None or now - api_key.last_used_at > LAST_USED_RESOLUTION:
            ApiKey.objects.filter(pk=api_key.pk).filter(
                Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
            ).update(last_used_at=now)
        caller = Caller(api_key=api_key, organization=api_key.organization, scopes=effective_scopes(api_key.scopes))
        context_of(request).caller = caller  # read by the access log
        return (caller, caller)

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE


def client_ip(request: HttpRequest) -> str:
    """The caller's address: the socket peer, or the forwarded header when the peer is one of
    the trusted proxies (anyone else could write any address in it)."""
    header = settings.SVCX_TRUSTED_PROXY_HEADER
    peer = str(request.META.get("REMOTE_ADDR", ""))
    if header and ip_allowed(peer, settings.SVCX_TRUSTED_PROXIES):
        value = request.META.get("HTTP_" + header.upper().replace("-", "_"), "")
        hops = [h.strip() for h in value.split(",") if h.strip()]
        if len(hops) >= settings.SVCX_TRUSTED_PROXY_COUNT:
            return hops[-settings.SVCX_TRUSTED_PROXY_COUNT]
    return peer


def ip_allowed(address: str, allowlist: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    for entry in allowlist:
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


class CallerPolicy(BasePermission):
    """What an authenticated caller may do here, checked in this order: organization suspended
    (403), caller outside the key's IP allowlist (403), scope (403), spending frozen (402, only
    on endpoints that spend credits)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        caller = caller_of(request)
        organization = caller.organization
        if organization.suspended_at is not None:
            raise ServiceError(
                ErrorCode.ACCOUNT_SUSPENDED,
                f"The organization is suspended; contact support at {settings.SVCX_SUPPORT_CONTACT}.",
                details={"support": settings.SVCX_SUPPORT_CONTACT},
            )
        allowlist = caller.api_key.ip_allowlist
        if allowlist and not ip_allowed(client_ip(request._request), allowlist):
            raise ServiceError(
                ErrorCode.IP_NOT_ALLOWED, "The request comes from an address outside the key's IP allowlist."
            )
        required = getattr(view, "method_scopes", {}).get(request.method) or getattr(view, "required_scope", None)
        if required is not None and required not in caller.scopes:
            raise ServiceError(
                ErrorCode.INSUFFICIENT_SCOPE,
                f"This endpoint requires the scope {required!r}, which the key {caller.api_key.hint} lacks.",
                details={"required_scope": required, "key_scopes": sorted(caller.scopes)},
            )
        if getattr(view, "spends_credits", False) and organization.delinquent_debt is not None:
            debt = int(organization.delinquent_debt)
            raise ServiceError(
                ErrorCode.ACCOUNT_DELINQUENT,
                "Spending is frozen while a dispute or chargeback is open; contact billing support at "
                f"{settings.SVCX_SUPPORT_CONTACT}.",
                details={"debt_credits": debt, "credits_required_to_resume": debt},
            )
        return True

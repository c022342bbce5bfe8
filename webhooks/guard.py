"""Where a webhook may be sent: the checks against server-side request forgery.

An endpoint's URL is https (http only with SVCX_WEBHOOKS_ALLOW_PRIVATE) with no credentials in
it, and every address its host resolves to is public: never loopback, private, link-local,
multicast, reserved, unspecified or otherwise not globally routable, for IPv4 and IPv6 alike (an
IPv6 address that carries an IPv4 one, mapped, 6to4 or Teredo, is judged by that one too). The
URL is checked when an endpoint is saved and again before every attempt (the name may resolve
elsewhere by then: DNS rebinding); an attempt connects to the addresses that were checked, never
to a second resolution of the name (webhooks.transport).

SVCX_WEBHOOKS_ALLOW_PRIVATE (off in production; on for `make run` and the tests) lets http and
any address through, for a receiver on the same machine or network.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from webhooks.errors import WebhookUrlRefused

MAX_URL_LENGTH = 2048

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Target:
    """Where one attempt goes: the URL's parts and the addresses checked for its host."""

    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent in the request line
    addresses: tuple[str, ...]


def allow_private() -> bool:
    return bool(settings.SVCX_WEBHOOKS_ALLOW_PRIVATE)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, Teredo's client), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def address_refusal(text: str) -> str | None:
    """Why webhooks may not go to the address `text` ("a loopback address", ...), or None when
    it is a public address."""
    address: IPAddress = ipaddress.ip_address(text.split("%", 1)[0])  # a scope id (fe80::1%eth0) is no part of it
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            refusal = address_refusal(str(embedded))
            if refusal is not None:
                return refusal
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global:
        return "not a public address"
    return None


def _parts(url: str) -> tuple[str, str, int, str]:
    if len(url) > MAX_URL_LENGTH:
        raise WebhookUrlRefused(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise WebhookUrlRefused("The URL contains spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookUrlRefused(f"The URL is not valid ({exc}).") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise WebhookUrlRefused("The URL must start with https://.")
    if scheme == "http" and not allow_private():
        raise WebhookUrlRefused("The URL must use https.")
    if parts.username is not None or parts.password is not None:
        raise WebhookUrlRefused("The URL may not contain a user name or password.")
    host = parts.hostname
    if not host:
        raise WebhookUrlRefused("The URL has no host.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, host, port or (443 if scheme == "https" else 80), path


def _resolve(host: str, port: int) -> tuple[str, ...]:
    """Every address `host` resolves to (an address literal resolves to itself)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebhookUrlRefused(f"The host {host} does not resolve.") from exc
    addresses: list[str] = []
    for family, _, _, _, sockaddr in found:
        if family in (socket.AF_INET, socket.AF_INET6) and str(sockaddr[0]) not in addresses:
            addresses.append(str(sockaddr[0]))
    if not addresses:
        raise WebhookUrlRefused(f"The host {host} has no IPv4 or IPv6 address.")
    return tuple(addresses)


def target_resolve(url: str) -> Target:
    """The checked target of `url`: its host resolved once, each address allowed.

    Raises WebhookUrlRefused when the URL is malformed, not https, carries credentials, its host
    does not resolve, or any address it resolves to is not public (unless private ones are
    allowed): one bad address refuses the name, whichever address a connection would pick."""
    scheme, host, port, path = _parts(url)
    addresses = _resolve(host, port)
    if not allow_private():
        for address in addresses:
            refusal = address_refusal(address)
            if refusal is not None:
                shown = host if host == address else f"{host} resolves to {address}, which"
                raise WebhookUrlRefused(f"Webhooks cannot be sent there: {shown} is {refusal}.")
    return Target(scheme=scheme, host=host, port=port, path=path, addresses=addresses)


def endpoint_url_check(url: str) -> None:
    """Whether an endpoint may be saved with `url` (the same checks an attempt makes).
    Raises WebhookUrlRefused."""
    target_resolve(url)

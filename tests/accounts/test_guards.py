"""Per-address limits on the pages that take a secret without an API key (admin login, reveal)."""

from __future__ import annotations

import ipaddress
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django_ratelimit.core import _get_window

from accounts import services
from accounts.models import KeyReveal
from tests.factories import make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db]


def _window_has_time(value: str) -> bool:
    """django-ratelimit counts in fixed one-minute windows whose edge depends on the counted
    value: a test's attempts must not straddle one, or they are counted as two fresh starts."""
    return _get_window(value, 60) - time.time() > 15


def _address() -> str:
    # Counters live in Redis for a minute: each test (and each run) uses an address of its own.
    while True:
        address = f"198.18.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"
        if _window_has_time(address):
            return address


def _network() -> str:
    """A random IPv6 /64 prefix (four groups) whose counting window has time left."""
    while True:
        network = f"2001:db8:{secrets.randbelow(0xFFFF):x}:{secrets.randbelow(0xFFFF):x}"
        if _window_has_time(str(ipaddress.ip_network(f"{network}::/64"))):
            return network


def _assert_limited(response: Any) -> None:
    body = assert_envelope(response, 429, "rate_limit_requests")
    assert response["Retry-After"] == "60"
    assert (body["retry_after_ms"], body["details"]) == (60_000, {"meter": "attempts_per_address"})


def test_admin_login_is_limited_per_address(settings: Any) -> None:
    settings.SVCX_LOGIN_ATTEMPTS_PER_MINUTE = 3
    get_user_model().objects.create_superuser("staff", "staff@example.com", "right-password")
    guesser, other = Client(REMOTE_ADDR=_address()), Client(REMOTE_ADDR=_address())

    for _ in range(3):
        assert guesser.post("/admin/login/", {"username": "staff", "password": "guess"}).status_code == 200
    blocked = guesser.post("/admin/login/", {"username": "staff", "password": "right-password"})

    _assert_limited(blocked)
    assert "_auth_user_id" not in guesser.session  # the right password did not log the guesser in
    assert guesser.get("/admin/login/").status_code == 200  # the form itself still opens
    allowed = other.post("/admin/login/", {"username": "staff", "password": "right-password"})
    assert allowed.status_code == 302
    assert other.session["_auth_user_id"]


def test_reveal_link_is_limited_per_address_and_a_refusal_uses_nothing_up(settings: Any) -> None:
    settings.SVCX_REVEAL_ATTEMPTS_PER_MINUTE = 2
    leak = services.api_key_confirm_leak(api_key=make_key(make_org()).api_key)
    path = urlsplit(leak.reveal_url).path
    guesser, owner = Client(REMOTE_ADDR=_address()), Client(REMOTE_ADDR=_address())

    for _ in range(2):
        assert "svcx_sk_" not in guesser.post(f"/reveal/{secrets.token_urlsafe(32)}").content.decode()
    _assert_limited(guesser.post(path))

    assert KeyReveal.objects.get().revealed_at is None
    assert "svcx_sk_live_" in owner.post(path).content.decode()


def test_ipv6_clients_share_the_allowance_of_their_64(settings: Any) -> None:
    settings.SVCX_LOGIN_ATTEMPTS_PER_MINUTE = 2
    network = _network()
    first, neighbour = Client(REMOTE_ADDR=f"{network}::1"), Client(REMOTE_ADDR=f"{network}::2")
    elsewhere = Client(REMOTE_ADDR=f"2001:db8:{secrets.randbelow(0xFFFF):x}:ffff::1")
    guess = {"username": "staff", "password": "guess"}

    for _ in range(2):
        assert first.post("/admin/login/", guess).status_code == 200

    _assert_limited(neighbour.post("/admin/login/", guess))  # a fresh address in the same /64
    assert elsewhere.post("/admin/login/", guess).status_code == 200

"""Leak confirmation (interface.md 5.8) and the single-use reveal link."""

from __future__ import annotations

import csv
import io
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts import keyformat, services
from accounts.models import ApiKey, Membership
from billing.models import LedgerEntry
from billing.reports import key_activity_csv
from billing.selectors import credits_get
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def leaked(client: Client) -> dict[str, Any]:
    User = get_user_model()
    org = make_org(credits=100)
    owner = User.objects.create_user("owner", "owner@example.com", "x")
    admin = User.objects.create_user("admin", "admin@example.com", "x")
    member = User.objects.create_user("member", "member@example.com", "x")
    creator = User.objects.create_user("creator", "creator@example.com", "x")
    Membership.objects.create(organization=org, user=owner, role="owner")
    Membership.objects.create(organization=org, user=admin, role="admin")
    Membership.objects.create(organization=org, user=member, role="member")
    minted = make_key(org, name="prod", scopes=["account:read", "convert"], ip_allowlist=["127.0.0.0/8"], actor=creator)
    for _ in range(3):
        assert client.get("/v1/account", **bearer(minted.secret)).status_code == 200
    return {"org": org, "minted": minted}


def test_leak_revokes_now_without_suspending_or_freezing(
    client: Client, leaked: dict[str, Any], mailoutbox: list
) -> None:
    org, minted = leaked["org"], leaked["minted"]
    ledger_before = LedgerEntry.objects.filter(organization=org).count()

    leak = services.api_key_confirm_leak(api_key=minted.api_key)

    assert_envelope(client.get("/v1/account", **bearer(minted.secret)), 401, "revoked_api_key")
    org.refresh_from_db()
    assert org.status == "active"
    assert credits_get(organization=org, environment="live").balance == 100
    assert LedgerEntry.objects.filter(organization=org).count() == ledger_before  # no refund
    replacement = ApiKey.objects.get(pk=leak.replacement.id)
    assert (replacement.name, replacement.scopes, replacement.ip_allowlist) == (
        "prod",
        ["convert", "account:read"],
        ["127.0.0.0/8"],
    )
    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_reason == "leak confirmed"


def test_owners_admins_and_creator_are_told(leaked: dict[str, Any], mailoutbox: list) -> None:
    leak = services.api_key_confirm_leak(api_key=leaked["minted"].api_key)

    assert len(mailoutbox) == 1
    assert sorted(mailoutbox[0].to) == ["admin@example.com", "creator@example.com", "owner@example.com"]
    assert leak.reveal_url in mailoutbox[0].body
    assert leaked["minted"].secret not in mailoutbox[0].body


def test_reveal_link_shows_the_replacement_once(
    client: Client, leaked: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    leak = services.api_key_confirm_leak(api_key=leaked["minted"].api_key)
    path = urlsplit(leak.reveal_url).path

    page = client.get(path)
    assert page.status_code == 200
    assert "svcx_sk_" not in page.content.decode()  # a GET (a link preview) reveals nothing

    shown = client.post(path).content.decode()
    secret = shown.split("<code>")[1].split("</code>")[0]
    assert secret.startswith("svcx_sk_live_")
    assert client.get("/v1/account", **bearer(secret)).status_code == 200
    assert keyformat.parse(secret).hint == ApiKey.objects.get(pk=leak.replacement.id).hint

    assert path.rsplit("/", 1)[1] not in caplog.text  # the token that unseals the key is never logged
    again = client.post(path).content.decode()
    assert "svcx_sk_" not in again
    assert "used or has expired" in again


def test_expired_reveal_link_shows_nothing(client: Client, leaked: dict[str, Any]) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from accounts.models import KeyReveal

    leak = services.api_key_confirm_leak(api_key=leaked["minted"].api_key)
    KeyReveal.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    assert "svcx_sk_" not in client.post(urlsplit(leak.reveal_url).path).content.decode()


def test_activity_report_lists_the_keys_requests(client: Client, leaked: dict[str, Any]) -> None:
    minted = leaked["minted"]
    services.api_key_confirm_leak(api_key=minted.api_key)

    rows = list(csv.DictReader(io.StringIO(key_activity_csv(api_key=minted.api_key))))

    assert len(rows) == 3
    assert {r["endpoint"] for r in rows} == {"/v1/account"}
    assert {r["status"] for r in rows} == {"200"}
    assert all(r["request_id"].startswith("req_") for r in rows)

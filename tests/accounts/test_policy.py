"""Scopes, IP allowlists and account state, through HTTP."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from accounts import services
from accounts.models import ApiKey
from accounts.scopes import ScopeError
from billing.models import LedgerEntry
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.svcx.failing_urls")]
ACCOUNT_READ_ROUTES = ["/v1/account", "/v1/credits/ledger", "/v1/usage", "/v1/usage/records"]


@pytest.mark.parametrize("path", ACCOUNT_READ_ROUTES)
def test_account_read_routes_need_account_read(client: Client, path: str) -> None:
    org = make_org()
    restricted = make_key(org, preset="restricted")
    read_only = make_key(org, preset="read_only")

    error = assert_envelope(client.get(path, **bearer(restricted.secret)), 403, "insufficient_scope")

    assert error["type"] == "permission_error"
    assert error["details"]["required_scope"] == "account:read"
    assert client.get(path, **bearer(read_only.secret)).status_code == 200


def test_presets_grant_what_the_specification_says() -> None:
    org = make_org()

    assert make_key(org).api_key.scopes == ["convert", "files:write", "files:read", "inspect", "account:read"]
    assert make_key(org, preset="restricted").api_key.scopes == ["convert", "files:write", "files:read", "inspect"]
    assert make_key(org, preset="read_only").api_key.scopes == ["files:read", "account:read"]
    assert make_key(org, scopes=["inspect", "convert"]).api_key.scopes == ["convert", "inspect"]


@pytest.mark.parametrize("scope", ["keys:write", "org:admin", "webhooks:write", "jobs:read", "billing:read"])
def test_reserved_scopes_are_never_issued(scope: str) -> None:
    org = make_org()

    with pytest.raises(ScopeError, match="reserved"):
        make_key(org, scopes=["convert", scope])

    assert not ApiKey.objects.filter(organization=org).exists()


def test_unknown_scope_in_a_stored_record_is_ignored(client: Client) -> None:
    minted = make_key(make_org(), scopes=["account:read"])
    ApiKey.objects.filter(pk=minted.api_key.pk).update(scopes=["account:read", "future:thing", 7])

    assert client.get("/v1/account", **bearer(minted.secret)).status_code == 200


def test_scope_change_takes_effect_on_the_next_request(client: Client) -> None:
    minted = make_key(make_org())
    assert client.get("/v1/account", **bearer(minted.secret)).status_code == 200

    services.api_key_update(api_key=minted.api_key, scopes=["convert"])

    assert_envelope(client.get("/v1/account", **bearer(minted.secret)), 403, "insufficient_scope")


def test_caller_inside_the_allowlist_passes(client: Client) -> None:
    minted = make_key(make_org(), ip_allowlist=["10.0.0.0/8", "2001:db8::/32"])

    assert client.get("/v1/test/whoami", REMOTE_ADDR="10.20.30.40", **bearer(minted.secret)).status_code == 200
    assert client.get("/v1/test/whoami", REMOTE_ADDR="2001:db8::1", **bearer(minted.secret)).status_code == 200


def test_caller_outside_the_allowlist_is_ip_not_allowed(client: Client) -> None:
    minted = make_key(make_org(), ip_allowlist=["10.0.0.7"])

    error = assert_envelope(
        client.get("/v1/test/whoami", REMOTE_ADDR="192.0.2.1", **bearer(minted.secret)), 403, "ip_not_allowed"
    )

    assert error["type"] == "permission_error"


def test_forwarded_header_is_believed_only_when_configured(client: Client, settings: Any) -> None:
    minted = make_key(make_org(), ip_allowlist=["203.0.113.5/32"])
    forwarded = {"HTTP_X_FORWARDED_FOR": "203.0.113.5", "REMOTE_ADDR": "127.0.0.1"}

    assert client.get("/v1/test/whoami", **forwarded, **bearer(minted.secret)).status_code == 403
    settings.SVCX_TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    assert client.get("/v1/test/whoami", **forwarded, **bearer(minted.secret)).status_code == 200


def test_forwarded_header_is_believed_only_from_a_trusted_proxy(client: Client, settings: Any) -> None:
    minted = make_key(make_org(), ip_allowlist=["203.0.113.5/32"])
    settings.SVCX_TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    settings.SVCX_TRUSTED_PROXIES = ["10.0.0.0/24"]
    spoofed = {"HTTP_X_FORWARDED_FOR": "203.0.113.5", "REMOTE_ADDR": "198.51.100.7"}
    proxied = {"HTTP_X_FORWARDED_FOR": "203.0.113.5", "REMOTE_ADDR": "10.0.0.9"}

    assert client.get("/v1/test/whoami", **spoofed, **bearer(minted.secret)).status_code == 403
    assert client.get("/v1/test/whoami", **proxied, **bearer(minted.secret)).status_code == 200


def test_allowlist_entries_are_validated() -> None:
    with pytest.raises(services.AccountError):
        make_key(make_org(), ip_allowlist=["not-an-ip"])


def test_suspended_org_is_refused_from_the_next_request(client: Client, settings: Any) -> None:
    settings.SVCX_SUPPORT_CONTACT = "help@acme.example"
    org = make_org()
    minted = make_key(org)
    assert client.get("/v1/account", **bearer(minted.secret)).status_code == 200

    services.organization_suspend(organization=org)

    error = assert_envelope(client.get("/v1/account", **bearer(minted.secret)), 403, "account_suspended")
    assert error["type"] == "permission_error"
    # "Contact support" says where.
    assert "contact support at help@acme.example" in error["message"]
    assert error["details"]["support"] == "help@acme.example"
    services.organization_unsuspend(organization=org)
    assert client.get("/v1/account", **bearer(minted.secret)).status_code == 200


def test_delinquent_org_cannot_spend_but_can_read(client: Client) -> None:
    org = make_org(credits=10)
    minted = make_key(org)
    services.organization_mark_delinquent(organization=org, debt=250)

    error = assert_envelope(client.post("/v1/test/spend", **bearer(minted.secret)), 402, "account_delinquent")

    assert error["type"] == "payment_required_error"
    assert error["details"] == {"debt_credits": 250, "credits_required_to_resume": 250}
    assert client.get("/v1/account", **bearer(minted.secret)).json()["status"] == "delinquent"
    assert LedgerEntry.objects.filter(organization=org).count() == 1  # the grant only
    services.organization_clear_delinquent(organization=org)
    assert client.post("/v1/test/spend", **bearer(minted.secret)).status_code == 200


def test_suspension_outranks_delinquency(client: Client) -> None:
    org = make_org()
    minted = make_key(org)
    services.organization_mark_delinquent(organization=org, debt=5)
    services.organization_suspend(organization=org)

    assert_envelope(client.post("/v1/test/spend", **bearer(minted.secret)), 403, "account_suspended")
    services.organization_unsuspend(organization=org)
    assert_envelope(client.post("/v1/test/spend", **bearer(minted.secret)), 402, "account_delinquent")

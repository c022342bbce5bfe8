"""Keys in the console: list, create with presets, rotate with the spec's overlaps, revoke,
confirm a leak, the activity report; through the shared services, audited with the person."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import services
from accounts.models import ApiKey, AuditEvent, KeyReveal
from tests.accounts.test_guards import _address
from tests.console.conftest import signed_in
from tests.factories import bearer, make_key

pytestmark = [pytest.mark.django_db]
SECRET = re.compile(r"svcx_sk_(?:live|test)_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}")


def create(client: Client, org: Any, **fields: Any) -> Any:
    nonce = re.search(r'name="nonce" value="([^"]+)"', client.get(f"/console/{org.id}/keys/new/").content.decode())
    data = {
        "name": "web",
        "project": "site",
        "environment": "live",
        "preset": "full",
        "nonce": nonce.group(1),
        **fields,
    }
    return client.post(f"/console/{org.id}/keys/new/", data)


def test_member_creates_a_custom_key_and_sees_the_secret_once(acme: Any, member: Any) -> None:
    client = signed_in(member, _address())

    response = create(
        client,
        acme,
        preset="custom",
        scopes=["convert", "files:read"],
        ip_allowlist="203.0.113.0/24\n198.51.100.7",
        expires_on=(timezone.localdate() + timedelta(days=30)).isoformat(),
    )

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    secrets = SECRET.findall(response.content.decode())
    assert len(secrets) == 1
    key = ApiKey.objects.get(organization=acme)
    assert (key.name, key.project, key.environment, key.scopes, key.ip_allowlist) == (
        "web",
        "site",
        "live",
        ["convert", "files:read"],
        ["198.51.100.7/32", "203.0.113.0/24"],
    )
    assert key.created_by == member
    assert timezone.localtime(key.expires_at).date() == timezone.localdate() + timedelta(days=30)
    assert list(AuditEvent.objects.filter(action="key.create").values_list("actor", "actor_label", "target")) == [
        (member.pk, member.username, key.id)
    ]
    # The secret is never shown again: not on the key's page, not in the list.
    detail = client.get(f"/console/{acme.id}/keys/{key.id}/").content.decode()
    listing = client.get(f"/console/{acme.id}/keys/").content.decode()
    assert SECRET.findall(detail) == SECRET.findall(listing) == []
    assert key.hint in listing
    assert "203.0.113.0/24" in listing


def test_sending_the_create_form_again_creates_no_second_key(acme: Any, owner: Any) -> None:
    client = signed_in(owner, _address())
    page = client.get(f"/console/{acme.id}/keys/new/").content.decode()
    form = {
        "name": "web",
        "environment": "live",
        "preset": "full",
        "nonce": re.search(r'name="nonce" value="([^"]+)"', page).group(1),
    }
    assert SECRET.findall(client.post(f"/console/{acme.id}/keys/new/", form).content.decode())

    again = client.post(f"/console/{acme.id}/keys/new/", form, follow=True)  # the browser's reload

    assert "That key was already created; its secret was shown once and is not kept." in again.content.decode()
    assert SECRET.findall(again.content.decode()) == []
    assert ApiKey.objects.filter(organization=acme).count() == 1


@pytest.mark.parametrize(
    ("preset", "scopes"),
    [
        ("full", ["convert", "files:write", "files:read", "inspect", "account:read"]),
        ("restricted", ["convert", "files:write", "files:read", "inspect"]),
        ("read_only", ["files:read", "account:read"]),
    ],
)
def test_presets_give_the_services_scopes(acme: Any, owner: Any, preset: str, scopes: list[str]) -> None:
    create(signed_in(owner, _address()), acme, preset=preset)

    assert ApiKey.objects.get(organization=acme).scopes == scopes


def test_a_bad_allowlist_entry_is_refused_with_the_services_reason_and_nothing_is_created(
    acme: Any, owner: Any
) -> None:
    response = create(signed_in(owner, _address()), acme, ip_allowlist="not-an-ip")

    assert response.status_code == 200
    assert "not an IP address or CIDR range: &#x27;not-an-ip&#x27;" in response.content.decode()
    assert not ApiKey.objects.filter(organization=acme).exists()


def test_custom_preset_needs_a_scope(acme: Any, owner: Any) -> None:
    response = create(signed_in(owner, _address()), acme, preset="custom")

    assert "Choose at least one scope for a custom key." in response.content.decode()
    assert not ApiKey.objects.filter(organization=acme).exists()


def test_the_active_key_limit_of_the_services_holds_in_the_console(acme: Any, owner: Any) -> None:
    for _ in range(services.MAX_ACTIVE_KEYS):
        make_key(acme)

    response = create(signed_in(owner, _address()), acme)

    assert "the organization has 100 active keys, the limit; revoke one first" in response.content.decode()
    assert ApiKey.objects.filter(organization=acme).count() == services.MAX_ACTIVE_KEYS


@pytest.mark.parametrize(("overlap", "seconds"), [("immediate", 0), ("1h", 3600), ("24h", 86400), ("7d", 7 * 86400)])
def test_rotate_keeps_the_old_key_for_the_chosen_overlap(acme: Any, owner: Any, overlap: str, seconds: int) -> None:
    old = make_key(acme, name="ci", scopes=["convert"], ip_allowlist=["10.0.0.0/8"]).api_key
    before = timezone.now()

    response = signed_in(owner, _address()).post(f"/console/{acme.id}/keys/{old.id}/rotate/", {"overlap": overlap})

    old.refresh_from_db()
    new = old.replaced_by
    assert SECRET.findall(response.content.decode()) != []
    assert (new.name, new.scopes, new.ip_allowlist, new.created_by) == ("ci", ["convert"], ["10.0.0.0/8"], owner)
    assert before + timedelta(seconds=seconds) <= old.expires_at <= timezone.now() + timedelta(seconds=seconds)
    event = AuditEvent.objects.get(action="key.rotate")
    assert (event.actor, event.target, event.details) == (owner, old.id, {"replacement": new.id, "overlap": overlap})


def test_revoke_asks_first_then_the_next_api_call_is_refused(acme: Any, owner: Any) -> None:
    minted = make_key(acme)
    client = signed_in(owner, _address())
    url = f"/console/{acme.id}/keys/{minted.api_key.id}/revoke/"
    assert Client().get("/v1/account", **bearer(minted.secret)).status_code == 200

    confirm = client.get(url)
    assert "Revoke the key" in confirm.content.decode()
    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_at is None  # asking changes nothing

    done = client.post(url, follow=True)

    assert f"Revoked {minted.api_key.hint}: it is refused from the next request." in done.content.decode()
    assert Client().get("/v1/account", **bearer(minted.secret)).json()["error"]["code"] == "revoked_api_key"
    assert AuditEvent.objects.get(action="key.revoke").actor == owner


def test_a_member_manages_only_the_keys_they_created(acme: Any, owner: Any, member: Any) -> None:
    theirs = make_key(acme, actor=owner).api_key
    mine = make_key(acme, actor=member).api_key
    client = signed_in(member, _address())

    refused = client.post(f"/console/{acme.id}/keys/{theirs.id}/revoke/")
    assert refused.status_code == 403
    assert "members manage only the keys they created" in refused.content.decode()
    assert client.post(f"/console/{acme.id}/keys/{theirs.id}/rotate/", {"overlap": "1h"}).status_code == 403
    assert client.get(f"/console/{acme.id}/keys/{theirs.id}/activity.csv").status_code == 403
    theirs.refresh_from_db()
    assert (theirs.revoked_at, theirs.replaced_by_id) == (None, None)

    assert client.post(f"/console/{acme.id}/keys/{mine.id}/revoke/").status_code == 302
    assert ApiKey.objects.get(pk=mine.pk).revoked_at is not None
    # Confirming a leak is for owners and admins.
    other = make_key(acme, actor=member).api_key
    assert client.post(f"/console/{acme.id}/keys/{other.id}/leak/").status_code == 403
    assert ApiKey.objects.get(pk=other.pk).revoked_at is None


def test_confirming_a_leak_mails_the_reveal_link_and_the_key_shows_its_state(
    acme: Any, owner: Any, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    leaked = make_key(acme, name="ci")
    Client(REMOTE_ADDR="203.0.113.9").get("/v1/account", **bearer(leaked.secret))  # activity to report
    client = signed_in(owner, _address())

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/console/{acme.id}/keys/{leaked.api_key.id}/leak/", follow=True)

    leaked.api_key.refresh_from_db()
    replacement = leaked.api_key.replaced_by
    page = response.content.decode()
    assert f"Leak confirmed: {leaked.api_key.hint} revoked; its replacement {replacement.hint}" in page
    assert f"mailed to {owner.email}" in page
    assert "The link is unused, valid until" in page
    assert [m.to for m in mailoutbox] == [[owner.email]]
    link = re.search(r"/reveal/\S+", mailoutbox[0].body).group(0)
    assert SECRET.findall(page) == []  # the console never shows the replacement itself
    # The reveal link shows it once; the key's page then says so.
    secret = SECRET.findall(Client().post(link).content.decode())[0]
    assert Client().get("/v1/account", **bearer(secret)).status_code == 200
    assert KeyReveal.objects.get(api_key=replacement).revealed_at is not None
    assert "The link was used at" in client.get(f"/console/{acme.id}/keys/{leaked.api_key.id}/").content.decode()
    # The 90-day activity report, from the key.
    report = client.get(f"/console/{acme.id}/keys/{leaked.api_key.id}/activity.csv")
    assert report["Content-Disposition"] == f'attachment; filename="{leaked.api_key.id}-activity-90d.csv"'
    lines = report.content.decode().splitlines()
    assert lines[0] == "created_at,request_id,method,endpoint,status,error_code,pages,credits,client_ip"
    assert len(lines) == 2
    assert lines[1].endswith(",GET,/v1/account,200,,0,0,203.0.113.9")
    assert list(AuditEvent.objects.filter(actor=owner).values_list("action", flat=True).order_by("created_at")) == [
        "key.confirm_leak",
        "key.activity_report",
    ]


def test_changing_scopes_allowlist_and_expiry_applies_from_the_next_request(acme: Any, owner: Any) -> None:
    minted = make_key(acme, name="ci")
    client = signed_in(owner, _address())
    url = f"/console/{acme.id}/keys/{minted.api_key.id}/edit/"
    expiry = timezone.localdate() + timedelta(days=3)

    done = client.post(url, {"scopes": ["convert"], "ip_allowlist": "", "expires_on": expiry.isoformat()}, follow=True)

    assert f"Updated {minted.api_key.hint}: the change applies from the next request." in done.content.decode()
    key = ApiKey.objects.get(pk=minted.api_key.pk)
    assert (key.scopes, timezone.localtime(key.expires_at).date()) == (["convert"], expiry)
    refused = Client().get("/v1/account", **bearer(minted.secret)).json()["error"]
    assert (refused["code"], refused["details"]["required_scope"]) == ("insufficient_scope", "account:read")

    client.post(url, {"scopes": ["account:read"], "ip_allowlist": "203.0.113.0/24", "expires_on": ""})
    assert Client(REMOTE_ADDR="127.0.0.1").get("/v1/account", **bearer(minted.secret)).json()["error"]["code"] == (
        "ip_not_allowed"
    )
    assert Client(REMOTE_ADDR="203.0.113.5").get("/v1/account", **bearer(minted.secret)).status_code == 200
    assert ApiKey.objects.get(pk=minted.api_key.pk).expires_at is None
    assert list(AuditEvent.objects.filter(action="key.update").values_list("actor", flat=True)) == [owner.pk, owner.pk]


def test_a_bad_change_is_refused_and_changes_nothing(acme: Any, owner: Any, member: Any) -> None:
    minted = make_key(acme, scopes=["convert"], actor=owner)
    url = f"/console/{acme.id}/keys/{minted.api_key.id}/edit/"
    client = signed_in(owner, _address())

    no_scope = client.post(url, {"scopes": [], "ip_allowlist": ""})
    bad_ip = client.post(url, {"scopes": ["inspect"], "ip_allowlist": "300.1.1.1"})
    past = client.post(url, {"scopes": ["inspect"], "expires_on": "2020-01-01"})
    not_theirs = signed_in(member, _address()).post(url, {"scopes": ["inspect"]})

    assert "A key needs at least one scope." in no_scope.content.decode()
    assert "not an IP address or CIDR range: &#x27;300.1.1.1&#x27;" in bad_ip.content.decode()
    assert "The expiry date is in the past." in past.content.decode()
    assert not_theirs.status_code == 403
    key = ApiKey.objects.get(pk=minted.api_key.pk)
    assert (key.scopes, key.ip_allowlist, key.expires_at) == (["convert"], [], None)
    assert not AuditEvent.objects.filter(action="key.update").exists()


def test_the_key_list_reads_a_fixed_number_of_queries_however_many_keys(acme: Any, owner: Any) -> None:
    client = signed_in(owner, _address())
    counts = []
    for _ in range(2):
        for _ in range(5):
            old = make_key(acme, actor=owner).api_key
            services.api_key_rotate(api_key=old, overlap="1h", actor=owner)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/console/{acme.id}/keys/").status_code == 200
        counts.append(len(queries))

    assert counts[0] == counts[1]
    assert ApiKey.objects.filter(organization=acme).count() == 20


def test_a_revoked_key_is_neither_revoked_again_nor_reported_as_leaked(acme: Any, owner: Any, mailoutbox: Any) -> None:
    minted = make_key(acme)
    services.api_key_revoke(api_key=minted.api_key, reason="done with it", actor=owner)
    client = signed_in(owner, _address())

    again = client.post(f"/console/{acme.id}/keys/{minted.api_key.id}/revoke/", follow=True).content.decode()
    leak = client.post(f"/console/{acme.id}/keys/{minted.api_key.id}/leak/", follow=True).content.decode()

    assert f"{minted.api_key.hint} is already revoked." in again
    assert f"{minted.api_key.hint} is already revoked (done with it)." in leak
    key = ApiKey.objects.get(pk=minted.api_key.pk)
    assert (key.revoked_reason, key.replaced_by_id) == ("done with it", None)
    assert list(AuditEvent.objects.filter(organization=acme).values_list("action", flat=True)).count("key.revoke") == 1
    assert mailoutbox == []


def test_revoked_keys_are_folded_away_below_the_keys_in_use(acme: Any, owner: Any) -> None:
    client = signed_in(owner, _address())
    in_use, revoked = make_key(acme, name="web"), make_key(acme, name="old-ci")
    services.api_key_revoke(api_key=revoked.api_key)

    listing = client.get(f"/console/{acme.id}/keys/").content.decode()

    table, _, folded = listing.partition('<details id="retired-keys">')
    assert in_use.api_key.hint in table
    assert revoked.api_key.hint not in table
    assert revoked.api_key.hint in folded
    assert "Revoked and expired keys (1)" in folded
    services.api_key_revoke(api_key=in_use.api_key)
    assert "No keys in use." in client.get(f"/console/{acme.id}/keys/").content.decode()

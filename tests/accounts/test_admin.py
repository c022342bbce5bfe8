"""Staff actions in the Django admin: keys shown once, rotation, revocation, leaks, suspension."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts.models import ApiKey, AuditEvent, Membership, Organization
from billing.models import LedgerEntry
from tests.factories import bearer, make_key, make_org

pytestmark = [pytest.mark.django_db]
SECRET = re.compile(r"svcx_sk_(?:live|test)_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}")


@pytest.fixture
def staff(client: Client) -> Any:
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return user


def _action(client: Client, model: str, action: str, ids: list[str], **extra: Any) -> Any:
    return client.post(f"/admin/accounts/{model}/", {"action": action, "_selected_action": ids, **extra})


def _change_url(model: str, pk: str) -> str:
    # The admin reads "_24" in a URL as "$": ids are random base62, so they are quoted as its own links are.
    return reverse(f"admin:accounts_{model}_change", args=[quote(pk)])


def test_staff_creates_a_key_and_sees_the_secret_once(client: Client, staff: Any) -> None:
    org = make_org()

    response = client.post(
        "/admin/accounts/apikey/add/",
        {
            "organization": org.pk,
            "environment": "live",
            "name": "web",
            "project": "",
            "preset": "read_only",
            "allowlist": "",
            "expires_at": "",
        },
    )

    assert response.status_code == 200
    secrets = SECRET.findall(response.content.decode())
    assert len(secrets) == 1
    key = ApiKey.objects.get(organization=org)
    assert key.scopes == ["files:read", "account:read"]
    assert client.get("/v1/account", **bearer(secrets[0])).status_code == 200
    change_page = client.get(_change_url("apikey", key.pk))
    assert change_page.status_code == 200
    assert key.hint in change_page.content.decode()
    assert secrets[0] not in change_page.content.decode()
    assert AuditEvent.objects.filter(action="key.create", actor=staff).exists()


def test_staff_rotates_with_a_chosen_overlap(client: Client, staff: Any) -> None:
    minted = make_key(make_org())

    response = _action(client, "apikey", "rotate_1h", [minted.api_key.pk])

    secrets = SECRET.findall(response.content.decode())
    assert len(secrets) == 1
    old = ApiKey.objects.get(pk=minted.api_key.pk)
    assert old.replaced_by is not None
    assert AuditEvent.objects.get(action="key.rotate").details["overlap"] == "1h"


def test_staff_revokes(client: Client, staff: Any) -> None:
    minted = make_key(make_org())

    _action(client, "apikey", "revoke", [minted.api_key.pk])

    assert client.get("/v1/account", **bearer(minted.secret)).json()["error"]["code"] == "revoked_api_key"


def test_staff_confirms_a_leak_without_seeing_the_replacement(client: Client, staff: Any) -> None:
    minted = make_key(make_org())

    response = _action(client, "apikey", "confirm_leak", [minted.api_key.pk])

    assert not SECRET.findall(
        client.get(response["Location"]).content.decode() if response.status_code == 302 else response.content.decode()
    )
    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_at is not None
    assert ApiKey.objects.filter(organization=minted.api_key.organization, revoked_at__isnull=True).count() == 1


def test_staff_downloads_the_activity_report(client: Client, staff: Any) -> None:
    minted = make_key(make_org())
    client.get("/v1/account", **bearer(minted.secret))

    response = _action(client, "apikey", "activity_report", [minted.api_key.pk])

    assert response["Content-Type"] == "text/csv"
    lines = response.content.decode().strip().splitlines()
    assert lines[0].startswith("created_at,request_id")
    assert len(lines) == 2


def test_staff_suspends_and_marks_delinquent(client: Client, staff: Any) -> None:
    org = make_org()

    _action(client, "organization", "suspend", [org.pk])
    assert Organization.objects.get(pk=org.pk).status == "suspended"
    _action(client, "organization", "unsuspend", [org.pk])

    page = _action(client, "organization", "mark_delinquent", [org.pk])
    assert "debt" in page.content.decode()
    _action(client, "organization", "mark_delinquent", [org.pk], apply="Apply", debt="70")
    assert Organization.objects.get(pk=org.pk).delinquent_debt == 70
    actions = set(AuditEvent.objects.filter(actor=staff).values_list("action", flat=True))
    assert {"organization.suspend", "organization.unsuspend", "organization.delinquent"} <= actions


def test_staff_grants_and_refunds_with_a_reason(client: Client, staff: Any) -> None:
    org = make_org()

    _action(client, "organization", "grant_credits", [org.pk], apply="Apply", credits="30", reason="promo")
    _action(
        client,
        "organization",
        "refund_or_adjust",
        [org.pk],
        apply="Apply",
        kind="refund",
        credits="5",
        reason="bad output",
    )

    rows = {r.kind: r for r in LedgerEntry.objects.filter(organization=org)}
    assert rows["grant"].credits == 30
    assert (rows["refund"].credits, rows["refund"].reason, rows["refund"].actor_label) == (5, "bad output", "staff")
    assert rows["refund"].balance_after == 35


def test_staff_sets_a_limit_override(client: Client, staff: Any) -> None:
    org = make_org()

    response = client.post(
        _change_url("organization", org.pk),
        {
            "name": org.name,
            "debug_policy": "enabled",
            "limits": '{"requests": 12}',
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
            "memberships-MIN_NUM_FORMS": "0",
            "memberships-MAX_NUM_FORMS": "1000",
        },
    )

    assert (response.status_code, response["Location"]) == (302, reverse("admin:accounts_organization_changelist"))
    assert Organization.objects.get(pk=org.pk).limits == {"requests": 12}
    assert AuditEvent.objects.filter(action="organization.set_limit", actor=staff).exists()


def test_admin_change_page_opens_for_an_id_that_looks_like_an_admin_escape(client: Client, staff: Any) -> None:
    org = Organization.objects.create(id="org_24Ab5F2Fxyz", name="escapes")

    response = client.get(_change_url("organization", org.pk))

    assert response.status_code == 200
    assert "org_24Ab5F2Fxyz" in response.content.decode()


def _org_form(org: Organization, rows: list[dict[str, Any]], initial: int) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": org.name,
        "debug_policy": org.debug_policy,
        "limits": "{}",
        "memberships-TOTAL_FORMS": str(len(rows)),
        "memberships-INITIAL_FORMS": str(initial),
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
        "_save": "Save",
    }
    for i, row in enumerate(rows):
        data.update({f"memberships-{i}-{k}": v for k, v in row.items()})
        data[f"memberships-{i}-organization"] = org.pk
    return data


def test_staff_replaces_the_only_owner_on_the_same_row(client: Client, staff: Any) -> None:
    org = make_org()
    users = get_user_model().objects
    alice, bob = users.create_user("alice", "a@example.com"), users.create_user("bob", "b@example.com")
    membership = Membership.objects.create(organization=org, user=alice, role="owner")

    response = client.post(
        _change_url("organization", org.pk),
        _org_form(org, [{"id": membership.pk, "user": bob.pk, "role": "owner"}], initial=1),
        follow=True,
    )

    assert "replaced alice by bob as owner" in response.content.decode()
    assert list(Membership.objects.filter(organization=org).values_list("user__username", "role")) == [("bob", "owner")]


def test_removing_the_only_owner_in_the_admin_is_refused_and_changes_nothing(client: Client, staff: Any) -> None:
    org = make_org()
    alice = get_user_model().objects.create_user("alice", "a@example.com")
    membership = Membership.objects.create(organization=org, user=alice, role="owner")

    response = client.post(
        _change_url("organization", org.pk),
        _org_form(org, [{"id": membership.pk, "user": alice.pk, "role": "owner", "DELETE": "on"}], initial=1),
    )

    assert response.status_code == 200
    assert "would have no owner left" in response.content.decode()
    assert Membership.objects.filter(organization=org, role="owner").count() == 1
    assert not AuditEvent.objects.filter(action="member.remove").exists()

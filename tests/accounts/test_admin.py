"""Staff actions in the Django admin. Every action that changes state asks first: a confirmation
page lists what it acts on and takes a reason, which lands in the audit log; nothing happens
before. The same actions are on an object's page; only the actions the user may perform are
offered; a staff rotation never shows the new secret to staff (it goes into the single-use reveal
link). A key staff create is shown once."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client, RequestFactory
from django.urls import reverse

from accounts.models import ApiKey, AuditEvent, Membership, Organization
from billing.models import LedgerEntry
from tests.factories import admin_url, bearer, make_key, make_org

pytestmark = [pytest.mark.django_db]
SECRET = re.compile(r"svcx_sk_(?:live|test)_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}")
REVEAL = re.compile(r"https?://[^\s<\"]+/reveal/[0-9A-Za-z_-]+")


@pytest.fixture
def staff(client: Client) -> Any:
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return user


def _action(client: Client, model: str, action: str, ids: list[str], **extra: Any) -> Any:
    return client.post(f"/admin/accounts/{model}/", {"action": action, "_selected_action": ids, **extra})


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
    change_page = client.get(admin_url("accounts_apikey", key.pk))
    assert change_page.status_code == 200
    assert key.hint in change_page.content.decode()
    assert secrets[0] not in change_page.content.decode()
    assert AuditEvent.objects.filter(action="key.create", actor=staff).exists()


def test_staff_downloads_the_activity_report(client: Client, staff: Any) -> None:
    minted = make_key(make_org())
    client.get("/v1/account", **bearer(minted.secret))

    response = _action(client, "apikey", "activity_report", [minted.api_key.pk])

    assert response["Content-Type"] == "text/csv"
    lines = response.content.decode().strip().splitlines()
    assert lines[0].startswith("created_at,request_id")
    assert len(lines) == 2


def test_staff_marks_delinquent_with_a_reason_and_clears_it(client: Client, staff: Any) -> None:
    org = make_org()

    page = _action(client, "organization", "mark_delinquent", [org.pk])
    assert "debt" in page.content.decode()
    _action(client, "organization", "mark_delinquent", [org.pk], apply="Apply", debt="70", reason="chargeback 81")
    assert Organization.objects.get(pk=org.pk).delinquent_debt == 70
    _action(client, "organization", "clear_delinquent", [org.pk], apply="Apply", reason="chargeback won")
    assert Organization.objects.get(pk=org.pk).delinquent_debt is None

    reasons = {e.action: e.details for e in AuditEvent.objects.filter(actor=staff, organization=org)}
    assert reasons["organization.delinquent"] == {"debt": 70, "reason": "chargeback 81"}
    assert reasons["organization.clear_delinquent"] == {"reason": "chargeback won"}


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
    audited = {e.action: e.details["reason"] for e in AuditEvent.objects.filter(actor=staff, organization=org)}
    assert (audited["credits.grant"], audited["credits.refund"]) == ("promo", "bad output")


def test_a_grant_without_a_reason_is_refused_and_grants_nothing(client: Client, staff: Any) -> None:
    org = make_org()

    page = _action(client, "organization", "grant_credits", [org.pk], apply="Apply", credits="30", reason=" ")

    assert page.status_code == 200
    assert "This field is required." in page.content.decode()
    assert not LedgerEntry.objects.filter(organization=org).exists()


def test_staff_sets_a_limit_override(client: Client, staff: Any) -> None:
    org = make_org()

    response = client.post(
        admin_url("accounts_organization", org.pk),
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

    response = client.get(admin_url("accounts_organization", org.pk))

    assert response.status_code == 200
    assert "org_24Ab5F2Fxyz" in response.content.decode()


def test_admin_pages_open_at_an_id_pasted_as_it_is(client: Client, staff: Any) -> None:
    # An id pasted from an answer or a log into the admin's URL, unquoted: the admin reads its
    # "_2B" as "+", finds nothing under that, and looks the id up as written.
    org = Organization.objects.create(id="org_2BoNjE5OdpMufzMqqERAJf5A", name="pasted")
    key = make_key(org).api_key
    ApiKey.objects.filter(pk=key.pk).update(id="key_3A" + key.pk[6:])
    pasted_key = "key_3A" + key.pk[6:]

    for url in (
        f"/admin/accounts/organization/{org.pk}/change/",
        admin_url("accounts_organization", org.pk),
        f"/admin/accounts/apikey/{pasted_key}/change/",
        f"/admin/accounts/auditevent/?organization__id__exact={org.pk}",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
    assert "pasted" in client.get(f"/admin/accounts/organization/{org.pk}/change/").content.decode()
    missing = client.get("/admin/accounts/organization/org_2BnothingXX/change/")
    assert (missing.status_code, missing["Location"]) == (302, reverse("admin:index"))


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
        admin_url("accounts_organization", org.pk),
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
        admin_url("accounts_organization", org.pk),
        _org_form(org, [{"id": membership.pk, "user": alice.pk, "role": "owner", "DELETE": "on"}], initial=1),
    )

    assert response.status_code == 200
    assert "would have no owner left" in response.content.decode()
    assert Membership.objects.filter(organization=org, role="owner").count() == 1
    assert not AuditEvent.objects.filter(action="member.remove").exists()


def _object_action_url(model: str, pk: str, action: str) -> str:
    return reverse(f"admin:accounts_{model}_action", args=[quote(pk), action])


def _owner(org: Organization, username: str = "olga") -> Any:
    user = get_user_model().objects.create_user(username, f"{username}@example.com")
    Membership.objects.create(organization=org, user=user, role="owner")
    return user


# --- the confirmation page comes first ---------------------------------------------------------

CASES = [
    ("organization", "suspend", "Every request of these organizations is refused from the next one"),
    ("apikey", "revoke", "Requests with these keys are refused from the next one"),
    ("apikey", "confirm_leak", "Each key is revoked now and gets a replacement"),
    ("apikey", "rotate", "Each key gets a replacement with the same name"),
]


def _target(model: str) -> tuple[str, str]:
    """The pk and the label the confirmation page lists, of a fresh organization or key."""
    org = make_org("Acme")
    if model == "organization":
        return org.pk, f"Acme ({org.pk})"
    minted = make_key(org, name="web")
    return minted.api_key.pk, f"web {minted.api_key.hint} ({minted.api_key.pk})"


def _unchanged(model: str, pk: str) -> bool:
    if model == "organization":
        return Organization.objects.get(pk=pk).suspended_at is None
    key = ApiKey.objects.get(pk=pk)
    return key.revoked_at is None and key.replaced_by_id is None and key.expires_at is None


@pytest.mark.parametrize(("model", "action", "consequence"), CASES)
def test_an_action_from_the_list_shows_a_confirmation_page_and_does_nothing_yet(
    client: Client, staff: Any, model: str, action: str, consequence: str
) -> None:
    pk, label = _target(model)

    page = _action(client, model, action, [pk])

    body = page.content.decode()
    assert page.status_code == 200
    assert consequence in body
    assert label in body
    assert re.search(r'<input type="text" name="reason"[^>]* required', body)
    assert f'<a href="/admin/accounts/{model}/" class="button cancel-link">Cancel</a>' in body
    assert _unchanged(model, pk)
    assert not AuditEvent.objects.filter(actor=staff).exists()


@pytest.mark.parametrize(("model", "action", "consequence"), CASES)
def test_confirming_without_a_reason_is_refused_and_does_nothing(
    client: Client, staff: Any, model: str, action: str, consequence: str
) -> None:
    pk, _ = _target(model)

    page = _action(client, model, action, [pk], apply="Apply", reason="   ", overlap="1h")

    assert page.status_code == 200
    assert "This field is required." in page.content.decode()
    assert _unchanged(model, pk)
    assert not AuditEvent.objects.filter(actor=staff).exists()


def test_suspend_with_a_reason_suspends_and_the_reason_is_in_the_audit_log(client: Client, staff: Any) -> None:
    org = make_org("Acme")
    key = make_key(org)

    response = _action(client, "organization", "suspend", [org.pk], apply="Apply", reason="fraud case 12")

    assert (response.status_code, response["Location"]) == (302, "/admin/accounts/organization/")
    assert Organization.objects.get(pk=org.pk).status == "suspended"
    assert client.get("/v1/account", **bearer(key.secret)).status_code == 403
    event = AuditEvent.objects.get(action="organization.suspend")
    assert (event.actor, event.target, event.details) == (staff, org.pk, {"reason": "fraud case 12"})
    log = client.get("/admin/accounts/auditevent/").content.decode()
    assert "fraud case 12" in log  # the reason column of the audit log

    _action(client, "organization", "unsuspend", [org.pk], apply="Apply", reason="case closed")
    assert Organization.objects.get(pk=org.pk).status == "active"
    assert AuditEvent.objects.get(action="organization.unsuspend").details == {"reason": "case closed"}


def test_revoke_with_a_reason_revokes_and_the_reason_is_in_the_audit_log(client: Client, staff: Any) -> None:
    minted = make_key(make_org())

    _action(client, "apikey", "revoke", [minted.api_key.pk], apply="Apply", reason="customer asked by phone")

    assert client.get("/v1/account", **bearer(minted.secret)).json()["error"]["code"] == "revoked_api_key"
    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_reason == "revoked by staff: customer asked by phone"
    event = AuditEvent.objects.get(action="key.revoke")
    assert (event.actor, event.details["reason"]) == (staff, "revoked by staff: customer asked by phone")


def test_confirm_leak_with_a_reason_revokes_mails_the_link_and_never_shows_the_secret(
    client: Client, staff: Any, mailoutbox: list, django_capture_on_commit_callbacks: Any
) -> None:
    org = make_org()
    _owner(org)
    minted = make_key(org)

    with django_capture_on_commit_callbacks(execute=True):
        page = _action(client, "apikey", "confirm_leak", [minted.api_key.pk], apply="Apply", reason="found on GitHub")

    body = page.content.decode()
    assert "mailed to olga@example.com" in body
    assert not SECRET.findall(body)
    assert not REVEAL.findall(body)
    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_reason == "leak confirmed"
    event = AuditEvent.objects.get(action="key.confirm_leak")
    assert (event.actor, event.details["reason"]) == (staff, "found on GitHub")
    assert [m.to for m in mailoutbox] == [["olga@example.com"]]


def test_confirm_leak_skips_a_key_already_revoked(client: Client, staff: Any) -> None:
    minted = make_key(make_org())
    _action(client, "apikey", "revoke", [minted.api_key.pk], apply="Apply", reason="done")

    response = client.post(
        "/admin/accounts/apikey/",
        {"action": "confirm_leak", "_selected_action": [minted.api_key.pk], "apply": "1", "reason": "leak"},
        follow=True,
    )

    assert "is already revoked (revoked by staff: done)" in response.content.decode()
    assert ApiKey.objects.get(pk=minted.api_key.pk).replaced_by_id is None
    assert not AuditEvent.objects.filter(action="key.confirm_leak").exists()


# --- rotation by staff: the secret goes to the organization, never to a staff page -------------


def test_staff_rotation_mails_a_reveal_link_and_no_staff_page_holds_the_secret(
    client: Client, staff: Any, mailoutbox: list, django_capture_on_commit_callbacks: Any
) -> None:
    org = make_org("Acme")
    _owner(org)
    old = make_key(org, name="web")
    seen = [_action(client, "apikey", "rotate", [old.api_key.pk])]

    with django_capture_on_commit_callbacks(execute=True):
        seen.append(
            _action(client, "apikey", "rotate", [old.api_key.pk], apply="Apply", overlap="1h", reason="customer asked")
        )

    rotated = ApiKey.objects.get(pk=old.api_key.pk)
    replacement = rotated.replaced_by
    assert replacement is not None
    assert "mailed to olga@example.com" in seen[-1].content.decode()
    for url in (
        admin_url("accounts_apikey", old.api_key.pk),
        admin_url("accounts_apikey", replacement.pk),
        "/admin/accounts/apikey/",
        "/admin/accounts/auditevent/",
    ):
        seen.append(client.get(url))
    # The owner opens the mailed link and gets the new secret, which works.
    [mail] = mailoutbox
    assert mail.to == ["olga@example.com"]
    assert "rotated by svcx staff" in mail.subject
    [link] = REVEAL.findall(mail.body)
    secret = SECRET.findall(Client().post(urlsplit(link).path).content.decode())[0]
    assert Client().get("/v1/account", **bearer(secret)).status_code == 200
    assert client.get("/v1/account", **bearer(old.secret)).status_code == 200  # the overlap: 1 more hour
    for response in seen:
        body = response.content.decode()
        assert secret not in body
        assert not SECRET.findall(body)
        assert link not in body
    event = AuditEvent.objects.get(action="key.rotate")
    assert event.details == {
        "replacement": replacement.pk,
        "overlap": "1h",
        "delivery": "reveal link",
        "reason": "customer asked",
    }


def test_staff_rotation_with_nobody_to_mail_shows_the_link_once_and_never_the_secret(
    client: Client, staff: Any, mailoutbox: list
) -> None:
    old = make_key(make_org("Nobody home"))

    page = _action(client, "apikey", "rotate", [old.api_key.pk], apply="Apply", overlap="immediate", reason="r")

    body = page.content.decode()
    assert "no-store" in page["Cache-Control"]
    assert "Nobody to mail." in body
    assert not SECRET.findall(body)
    [link] = REVEAL.findall(body)
    secret = SECRET.findall(Client().post(urlsplit(link).path).content.decode())[0]
    assert secret not in body
    assert Client().get("/v1/account", **bearer(secret)).status_code == 200
    assert client.get("/v1/account", **bearer(old.secret)).status_code == 401  # overlap "immediate"
    assert mailoutbox == []


def test_rotating_a_key_already_rotated_is_refused_and_mints_nothing(client: Client, staff: Any) -> None:
    old = make_key(make_org())
    _action(client, "apikey", "rotate", [old.api_key.pk], apply="Apply", overlap="24h", reason="r")

    response = _action(client, "apikey", "rotate", [old.api_key.pk], apply="Apply", overlap="24h", reason="r")

    assert response.status_code == 302
    assert ApiKey.objects.filter(organization=old.api_key.organization).count() == 2
    assert AuditEvent.objects.filter(action="key.rotate").count() == 1


# --- the actions on the object's own page -------------------------------------------------------


def _tools(client: Client, url: str) -> list[str]:
    body = client.get(url).content.decode()
    return re.findall(r'<a href="[^"]+/actions/(\w+)/" class="svcx-object-action">', body)


def test_the_organization_page_carries_the_actions_that_apply(client: Client, staff: Any) -> None:
    org = make_org("Acme")
    page = admin_url("accounts_organization", org.pk)

    assert _tools(client, page) == ["suspend", "mark_delinquent", "grant_credits", "refund_or_adjust"]

    client.post(_object_action_url("organization", org.pk, "suspend"), {"apply": "Apply", "reason": "r"})
    client.post(
        _object_action_url("organization", org.pk, "mark_delinquent"), {"apply": "1", "debt": "5", "reason": "r"}
    )
    assert _tools(client, page) == [
        "unsuspend",
        "mark_delinquent",
        "clear_delinquent",
        "grant_credits",
        "refund_or_adjust",
    ]


def test_an_action_on_the_organization_page_asks_then_acts_and_returns_to_the_page(client: Client, staff: Any) -> None:
    org = make_org("Acme")
    url = _object_action_url("organization", org.pk, "suspend")

    page = client.get(url)
    body = page.content.decode()
    assert page.status_code == 200
    assert f"Acme ({org.pk})" in body
    assert f'<a href="{admin_url("accounts_organization", org.pk)}" class="button cancel-link">Cancel</a>' in body
    assert Organization.objects.get(pk=org.pk).suspended_at is None
    assert client.post(url, {"apply": "Apply", "reason": ""}).status_code == 200
    assert Organization.objects.get(pk=org.pk).suspended_at is None

    done = client.post(url, {"apply": "Apply", "reason": "unpaid invoice"})

    assert (done.status_code, done["Location"]) == (302, admin_url("accounts_organization", org.pk))
    assert Organization.objects.get(pk=org.pk).status == "suspended"
    assert AuditEvent.objects.get(action="organization.suspend").details == {"reason": "unpaid invoice"}


def test_grant_and_refund_from_the_organization_page(client: Client, staff: Any) -> None:
    org = make_org("Acme")

    client.post(
        _object_action_url("organization", org.pk, "grant_credits"), {"apply": "1", "credits": "40", "reason": "promo"}
    )
    client.post(
        _object_action_url("organization", org.pk, "refund_or_adjust"),
        {"apply": "1", "kind": "adjustment", "credits": "-15", "reason": "double grant"},
    )

    body = client.get(admin_url("accounts_organization", org.pk)).content.decode()
    assert "balance 25 credits" in body


def test_the_key_page_carries_rotate_revoke_and_leak_until_the_key_is_revoked(client: Client, staff: Any) -> None:
    minted = make_key(make_org())
    page = admin_url("accounts_apikey", minted.api_key.pk)
    assert _tools(client, page) == ["rotate", "revoke", "confirm_leak"]

    confirmation = client.get(_object_action_url("apikey", minted.api_key.pk, "revoke"))
    assert "Requests with these keys are refused from the next one" in confirmation.content.decode()
    client.post(_object_action_url("apikey", minted.api_key.pk, "revoke"), {"apply": "1", "reason": "r"})

    assert _tools(client, page) == []
    again = client.get(_object_action_url("apikey", minted.api_key.pk, "confirm_leak"), follow=True)
    assert "does not apply now" in again.content.decode()
    assert ApiKey.objects.get(pk=minted.api_key.pk).replaced_by_id is None


def test_an_unknown_object_action_is_404(client: Client, staff: Any) -> None:
    org = make_org()

    assert client.get(_object_action_url("organization", org.pk, "delete_selected")).status_code == 404
    assert client.get(_object_action_url("organization", "org_missing", "suspend")).status_code == 404


# --- nothing offered that the user may not perform ----------------------------------------------


def test_delete_selected_is_not_offered_for_organizations_nor_keys(client: Client, staff: Any) -> None:
    org = make_org()
    make_key(org)

    for model in ("organization", "apikey"):
        body = client.get(f"/admin/accounts/{model}/").content.decode()
        assert 'value="delete_selected"' not in body, model
    assert "deletelink" not in client.get(admin_url("accounts_organization", org.pk)).content.decode()
    _action(client, "organization", "delete_selected", [org.pk], post="yes")
    assert Organization.objects.filter(pk=org.pk).exists()


def test_no_admin_offers_delete_selected_where_deletion_is_refused(staff: Any) -> None:
    request = RequestFactory().get("/admin/")
    request.user = staff
    for model, model_admin in admin.site._registry.items():
        if "delete_selected" in model_admin.get_actions(request):
            assert model_admin.has_delete_permission(request), model


@pytest.fixture
def viewer(client: Client) -> Any:
    """Staff who may view organizations and keys but change nothing."""
    user = get_user_model().objects.create_user("viewer", "viewer@example.com", "pw", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(codename__in=["view_organization", "view_apikey", "view_auditevent"])
    )
    client.force_login(user)
    return user


def test_staff_without_the_change_permission_are_offered_no_action_and_can_perform_none(
    client: Client, viewer: Any
) -> None:
    org = make_org("Acme")
    minted = make_key(org)

    for model in ("organization", "apikey"):
        body = client.get(f"/admin/accounts/{model}/").content.decode()
        for action in ("suspend", "unsuspend", "grant_credits", "rotate", "revoke", "confirm_leak"):
            assert f'value="{action}"' not in body, (model, action)
    assert _tools(client, admin_url("accounts_organization", org.pk)) == []
    assert _tools(client, admin_url("accounts_apikey", minted.api_key.pk)) == []

    _action(client, "organization", "suspend", [org.pk], apply="Apply", reason="r")
    _action(client, "apikey", "revoke", [minted.api_key.pk], apply="Apply", reason="r")
    assert client.get(_object_action_url("organization", org.pk, "suspend")).status_code == 403
    assert (
        client.post(
            _object_action_url("apikey", minted.api_key.pk, "revoke"), {"apply": "1", "reason": "r"}
        ).status_code
        == 403
    )

    assert Organization.objects.get(pk=org.pk).suspended_at is None
    assert ApiKey.objects.get(pk=minted.api_key.pk).revoked_at is None
    assert not AuditEvent.objects.filter(actor=viewer).exists()


def test_staff_with_the_change_permission_are_offered_the_actions(client: Client, viewer: Any) -> None:
    viewer.user_permissions.add(Permission.objects.get(codename="change_organization"))
    org = make_org("Acme")

    assert _tools(client, admin_url("accounts_organization", org.pk)) == [
        "suspend",
        "mark_delinquent",
        "grant_credits",
        "refund_or_adjust",
    ]
    assert 'value="suspend"' in client.get("/admin/accounts/organization/").content.decode()

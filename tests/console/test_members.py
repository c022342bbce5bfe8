"""Members and invitations in the console: owners and admins invite by e-mail; the link works
once and expires; roles change and members leave through the shared membership rules."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from accounts.models import AuditEvent, Membership
from console.models import Invitation
from tests.accounts.test_guards import _address
from tests.console.conftest import PASSWORD, make_person, signed_in

pytestmark = [pytest.mark.django_db]


def invite(client: Client, org: Any, email: str, role: str, capture: Any) -> Any:
    with capture(execute=True):
        return client.post(f"/console/{org.id}/members/invite/", {"email": email, "role": role}, follow=True)


def link_in(mail: Any) -> str:
    return re.search(r"http://127\.0\.0\.1:8000(/console/invitations/\S+)", mail.body).group(1)


def test_owner_invites_and_a_new_person_accepts_once(
    acme: Any, owner: Any, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    response = invite(
        signed_in(owner, _address()), acme, "nina@elsewhere.test", "admin", django_capture_on_commit_callbacks
    )

    assert "Invitation mailed to nina@elsewhere.test as admin; the link works once and expires in 7 days." in (
        response.content.decode()
    )
    assert [m.to for m in mailoutbox] == [["nina@elsewhere.test"]]
    assert mailoutbox[0].subject == "svcx: olga@acme.test invites you to Acme"
    link = link_in(mailoutbox[0])
    assert Invitation.objects.get().token_hash not in link  # only a hash of the token is stored

    guest = Client(REMOTE_ADDR=_address())
    assert "Join Acme" in guest.get(link).content.decode()
    joined = guest.post(link, {"password": "nina-password-123", "password_again": "nina-password-123"})

    assert joined["Location"] == f"/console/{acme.id}/"
    nina = get_user_model().objects.get(email="nina@elsewhere.test")
    assert nina.check_password("nina-password-123")
    assert Membership.objects.get(organization=acme, user=nina).role == "admin"
    assert guest.get(joined["Location"]).status_code == 200  # signed in as nina
    assert set(AuditEvent.objects.filter(organization=acme).values_list("actor_label", "action")) >= {
        ("olga@acme.test", "invitation.create"),
        ("nina@elsewhere.test", "member.add"),
        ("nina@elsewhere.test", "invitation.accept"),
    }
    # Single use: the link is dead now, for anyone.
    again = Client(REMOTE_ADDR=_address()).post(
        link, {"password": "x-password-1234", "password_again": "x-password-1234"}
    )
    assert again.status_code == 404
    assert "This invitation link has been used or has expired" in again.content.decode()
    assert Membership.objects.filter(organization=acme).count() == 2


def test_an_existing_account_signs_in_then_accepts(
    acme: Any, owner: Any, globex: Any, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    gary = make_person(globex, "gary@globex.test", "owner")
    invite(signed_in(owner, _address()), acme, "gary@globex.test", "member", django_capture_on_commit_callbacks)
    link = link_in(mailoutbox[0])

    anonymous = Client(REMOTE_ADDR=_address())
    page = anonymous.get(link).content.decode()
    assert "An account for gary@globex.test exists" in page
    assert anonymous.post(link, {"password": "whatever-1234", "password_again": "whatever-1234"}).status_code == 200
    assert not Membership.objects.filter(organization=acme, user=gary).exists()

    someone_else = signed_in(make_person(None, "eve@evil.test"), _address())
    refused = someone_else.post(link, follow=True)
    assert "this invitation is for gary@globex.test; you are signed in as eve@evil.test" in refused.content.decode()
    assert not Membership.objects.filter(organization=acme).exclude(user=owner).exists()

    assert signed_in(gary, _address()).post(link)["Location"] == f"/console/{acme.id}/"
    assert Membership.objects.get(organization=acme, user=gary).role == "member"


def test_an_expired_or_withdrawn_invitation_does_nothing(
    acme: Any, owner: Any, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = signed_in(owner, _address())
    invite(client, acme, "late@acme.test", "member", django_capture_on_commit_callbacks)
    invite(client, acme, "withdrawn@acme.test", "member", django_capture_on_commit_callbacks)
    late, withdrawn = link_in(mailoutbox[0]), link_in(mailoutbox[1])
    Invitation.objects.filter(email="late@acme.test").update(expires_at=timezone.now() - timedelta(seconds=1))
    pending = Invitation.objects.get(email="withdrawn@acme.test")
    assert client.post(f"/console/{acme.id}/invitations/{pending.pk}/revoke/").status_code == 302

    for link in (late, withdrawn):
        response = Client(REMOTE_ADDR=_address()).post(link, {"password": PASSWORD, "password_again": PASSWORD})
        assert response.status_code == 404
    assert not get_user_model().objects.filter(email__in=["late@acme.test", "withdrawn@acme.test"]).exists()
    assert list(Membership.objects.filter(organization=acme).values_list("user", flat=True)) == [owner.pk]


def test_members_cannot_invite_and_admins_cannot_invite_owners(
    acme: Any, member: Any, mailoutbox: Any, django_capture_on_commit_callbacks: Any
) -> None:
    refused = invite(signed_in(member, _address()), acme, "x@acme.test", "member", django_capture_on_commit_callbacks)
    assert refused.status_code == 403

    admin = make_person(acme, "ada@acme.test", "admin")
    response = invite(signed_in(admin, _address()), acme, "boss@acme.test", "owner", django_capture_on_commit_callbacks)
    assert "only an owner can invite an owner" in response.content.decode()

    assert Invitation.objects.count() == 0
    assert mailoutbox == []


def test_roles_change_under_the_shared_rules(acme: Any, owner: Any, member: Any) -> None:
    admin = make_person(acme, "ada@acme.test", "admin")
    as_admin = signed_in(admin, _address())
    mike = Membership.objects.get(user=member)
    olga = Membership.objects.get(user=owner)

    assert (
        "mike@acme.test is now admin."
        in as_admin.post(f"/console/{acme.id}/members/{mike.pk}/role/", {"role": "admin"}, follow=True).content.decode()
    )
    # An admin neither makes an owner nor demotes one.
    page = as_admin.post(f"/console/{acme.id}/members/{mike.pk}/role/", {"role": "owner"}, follow=True)
    assert "only an owner grants or takes away the owner role" in page.content.decode()
    as_admin.post(f"/console/{acme.id}/members/{olga.pk}/role/", {"role": "member"})
    # The last owner is never demoted (accounts.services' rule, as in the admin).
    as_owner = signed_in(owner, _address())
    last = as_owner.post(f"/console/{acme.id}/members/{olga.pk}/remove/", follow=True)
    assert "would have no owner left" in last.content.decode()

    assert dict(Membership.objects.filter(organization=acme).values_list("user__email", "role")) == {
        "olga@acme.test": "owner",
        "mike@acme.test": "admin",
        "ada@acme.test": "admin",
    }
    # A member may leave.
    as_mike = signed_in(member, _address())
    assert as_mike.post(f"/console/{acme.id}/members/{mike.pk}/remove/")["Location"] == "/console/"
    assert not Membership.objects.filter(user=member).exists()
    assert AuditEvent.objects.filter(action="member.remove", target=member.username, actor=member).exists()


def test_a_member_sees_members_but_no_management(acme: Any, owner: Any, member: Any) -> None:
    client = signed_in(member, _address())

    page = client.get(f"/console/{acme.id}/members/").content.decode()

    assert "olga@acme.test" in page
    assert "Invite someone" not in page
    assert client.get(f"/console/{acme.id}/audit/").status_code == 403
    olga = Membership.objects.get(user=owner)
    assert client.post(f"/console/{acme.id}/members/{olga.pk}/role/", {"role": "member"}).status_code == 403
    assert Membership.objects.get(user=owner).role == "owner"


def test_the_invitation_lifetime_is_said_in_days_or_hours(
    acme: Any, owner: Any, mailoutbox: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SVCX_INVITATION_LIFETIME = 12 * 3600.0

    page = invite(signed_in(owner, _address()), acme, "soon@acme.test", "member", django_capture_on_commit_callbacks)

    assert "the link works once and expires in 12 hours." in page.content.decode()
    assert "it works once and expires in 12 hours:" in mailoutbox[0].body
    invitation = Invitation.objects.get()
    assert timedelta(hours=11, minutes=59) < invitation.expires_at - timezone.now() <= timedelta(hours=12)

"""Members of an organization: `manage.py svcx member add|list|set-role|remove`, and the rules
the admin shares with it (accounts/services.py)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts import services
from accounts.models import AuditEvent, Membership
from tests.factories import make_org

pytestmark = [pytest.mark.django_db]


def svcx(*args: str) -> Any:
    out = io.StringIO()
    call_command("svcx", *args, stdout=out)
    return json.loads(out.getvalue())


def test_member_add_creates_the_user_when_given_an_email_and_lists_it() -> None:
    org = make_org()

    added = svcx("member", "add", org.id, "alice", "--email", "alice@example.com", "--role", "owner")

    assert added == {
        "object": "membership",
        "organization": org.id,
        "user": "alice",
        "email": "alice@example.com",
        "role": "owner",
        "created_at": added["created_at"],
    }
    user = get_user_model().objects.get(username="alice")
    assert not user.has_usable_password()
    assert [m["user"] for m in svcx("member", "list", org.id)["data"]] == ["alice"]
    assert AuditEvent.objects.filter(action="member.add", target="alice", organization=org).exists()


def test_member_add_finds_a_user_by_email_and_refuses_a_second_membership() -> None:
    org = make_org()
    get_user_model().objects.create_user("bob", "bob@example.com")

    assert svcx("member", "add", org.id, "BOB@example.com")["role"] == "member"
    with pytest.raises(CommandError, match="already a member"):
        svcx("member", "add", org.id, "bob", "--role", "admin")

    assert list(Membership.objects.filter(organization=org).values_list("role", flat=True)) == ["member"]


def test_member_add_of_an_unknown_user_without_email_is_refused() -> None:
    org = make_org()

    with pytest.raises(CommandError, match="no user 'carol'"):
        svcx("member", "add", org.id, "carol")

    assert not Membership.objects.exists()
    assert not get_user_model().objects.filter(username="carol").exists()


def test_member_set_role_and_remove() -> None:
    org = make_org()
    svcx("member", "add", org.id, "alice", "--email", "a@example.com", "--role", "owner")
    svcx("member", "add", org.id, "bob", "--email", "b@example.com")

    assert svcx("member", "set-role", org.id, "bob", "admin")["role"] == "admin"
    assert svcx("member", "remove", org.id, "bob") == {"organization": org.id, "user": "bob", "removed": True}

    assert list(Membership.objects.filter(organization=org).values_list("user__username", "role")) == [
        ("alice", "owner")
    ]
    event = AuditEvent.objects.get(action="member.set_role")
    assert event.details == {"role": "admin", "previous": "member"}
    assert AuditEvent.objects.filter(action="member.remove", target="bob").exists()


def test_the_last_owner_is_neither_demoted_nor_removed() -> None:
    org = make_org()
    svcx("member", "add", org.id, "alice", "--email", "a@example.com", "--role", "owner")

    with pytest.raises(CommandError, match="no owner left"):
        svcx("member", "set-role", org.id, "alice", "member")
    with pytest.raises(CommandError, match="no owner left"):
        svcx("member", "remove", org.id, "alice")

    assert Membership.objects.get(organization=org).role == "owner"
    assert not AuditEvent.objects.filter(action__in=["member.set_role", "member.remove"]).exists()
    # With a second owner, the first may go.
    svcx("member", "add", org.id, "bob", "--email", "b@example.com", "--role", "owner")
    svcx("member", "remove", org.id, "alice")
    assert list(Membership.objects.filter(organization=org).values_list("user__username", flat=True)) == ["bob"]


def test_unknown_role_and_non_member_are_refused_by_the_services() -> None:
    org = make_org()
    user = get_user_model().objects.create_user("dave", "d@example.com")

    with pytest.raises(services.AccountError, match="unknown role"):
        services.membership_add(organization=org, user=user, role="boss")
    with pytest.raises(services.AccountError, match="not a member"):
        services.membership_set_role(organization=org, user=user, role="admin")
    with pytest.raises(services.AccountError, match="not a member"):
        services.membership_remove(organization=org, user=user)

    assert not Membership.objects.exists()

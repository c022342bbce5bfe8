"""Changing the password while signed in: the current password and a new one twice; the browser
that changed it stays signed in and every other session of the person ends."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from accounts.models import AuditEvent
from console.models import ConsoleSession
from tests.accounts.test_guards import _address
from tests.console.conftest import PASSWORD, make_person, signed_in

pytestmark = [pytest.mark.django_db]
NEW_PASSWORD = "a-brand-new-password-2"


def _change(client: Client, acme: Any, old: str, new: str, again: str | None = None) -> Any:
    return client.post(
        f"/console/{acme.id}/password/",
        {"old_password": old, "new_password1": new, "new_password2": new if again is None else again},
        follow=True,
    )


def _signs_in(email: str, password: str) -> bool:
    response = Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": email, "password": password})
    return bool(response.status_code == 302)


def test_the_header_links_to_the_page_which_is_never_cached(owner: Any, acme: Any) -> None:
    client = signed_in(owner, _address())

    spending = client.get(f"/console/{acme.id}/").content.decode()
    page = client.get(f"/console/{acme.id}/password/")

    assert f'<a href="/console/{acme.id}/password/" >Change password</a>' in spending
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    body = page.content.decode()
    assert 'name="csrfmiddlewaretoken"' in body
    for field in ("old_password", "new_password1", "new_password2"):
        assert f'name="{field}"' in body


def test_new_password_works_and_keeps_this_session_while_ending_the_others(owner: Any, acme: Any) -> None:
    laptop, phone = signed_in(owner, _address()), signed_in(owner, _address())
    colleague = signed_in(make_person(acme, "colin@acme.test"), _address())

    response = _change(laptop, acme, PASSWORD, NEW_PASSWORD)

    assert response.redirect_chain == [(f"/console/{acme.id}/password/", 302)]
    assert "Your password is changed. 1 other session signed out; this one stays signed in." in (
        response.content.decode()
    )
    owner.refresh_from_db()
    assert owner.check_password(NEW_PASSWORD)
    assert laptop.get(f"/console/{acme.id}/").status_code == 200
    assert phone.get(f"/console/{acme.id}/")["Location"].startswith("/console/sign-in/")
    assert colleague.get(f"/console/{acme.id}/").status_code == 200
    # The phone's row is gone, not only refused; the laptop's session has a new key.
    assert list(ConsoleSession.objects.filter(user=owner).values_list("session_key", flat=True)) == [
        laptop.cookies["sessionid"].value
    ]
    assert _signs_in(owner.email, NEW_PASSWORD)
    assert not _signs_in(owner.email, PASSWORD)
    event = AuditEvent.objects.get(action="user.password_change")
    assert (event.actor, event.target, event.details) == (owner, owner.email, {"ended": 1})


def test_wrong_current_password_changes_nothing(owner: Any, acme: Any) -> None:
    laptop, phone = signed_in(owner, _address()), signed_in(owner, _address())
    sessions = set(ConsoleSession.objects.values_list("session_key", flat=True))

    response = _change(laptop, acme, "not-the-password", NEW_PASSWORD)

    assert response.status_code == 200
    assert "Your old password was entered incorrectly." in response.content.decode()
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)
    assert set(ConsoleSession.objects.values_list("session_key", flat=True)) == sessions
    assert phone.get(f"/console/{acme.id}/").status_code == 200
    assert not AuditEvent.objects.filter(action="user.password_change").exists()


@pytest.mark.parametrize(
    ("new", "again", "error"),
    [
        ("short-1", "short-1", "This password is too short. It must contain at least 8 characters."),
        (NEW_PASSWORD, NEW_PASSWORD + "x", "The two password fields didn"),
    ],
)
def test_a_new_password_the_validators_refuse_changes_nothing(
    owner: Any, acme: Any, new: str, again: str, error: str
) -> None:
    laptop, phone = signed_in(owner, _address()), signed_in(owner, _address())

    response = _change(laptop, acme, PASSWORD, new, again)

    assert response.status_code == 200
    assert error in response.content.decode()
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)
    assert phone.get(f"/console/{acme.id}/").status_code == 200


def test_anonymous_is_sent_to_sign_in_and_changes_nothing(owner: Any, acme: Any) -> None:
    anonymous = Client(REMOTE_ADDR=_address())

    page = anonymous.get(f"/console/{acme.id}/password/")
    post = anonymous.post(
        f"/console/{acme.id}/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )

    assert page["Location"] == f"/console/sign-in/?next=/console/{acme.id}/password/"
    assert post["Location"] == f"/console/sign-in/?next=/console/{acme.id}/password/"
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)


def test_changing_the_password_needs_the_csrf_token(owner: Any, acme: Any) -> None:
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=_address())
    client.force_login(owner)
    fields = {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}

    refused = client.post(f"/console/{acme.id}/password/", fields)

    assert refused.status_code == 403
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)
    page = client.get(f"/console/{acme.id}/password/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    accepted = client.post(f"/console/{acme.id}/password/", {**fields, "csrfmiddlewaretoken": token})
    assert accepted["Location"] == f"/console/{acme.id}/password/"
    owner.refresh_from_db()
    assert owner.check_password(NEW_PASSWORD)


def test_another_organizations_id_is_not_found(owner: Any, globex: Any) -> None:
    client = signed_in(owner, _address())

    assert client.get(f"/console/{globex.id}/password/").status_code == 404

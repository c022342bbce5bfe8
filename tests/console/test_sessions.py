"""Signing in and out of the console: Django's auth with console session tokens (svcx_cs_...)
that the API refuses, cookie flags, CSRF, per-address limits, the limit of failed sign-ins per
e-mail address, sign out everywhere, password reset."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
from typing import Any

import pytest
from django.test import Client
from django_ratelimit.core import _get_window

from accounts import services
from accounts.models import AuditEvent
from console.models import ConsoleSession
from tests.accounts.test_guards import _address
from tests.console.conftest import PASSWORD, make_person, signed_in
from tests.factories import bearer

pytestmark = [pytest.mark.django_db]
TOKEN = re.compile(r"^svcx_cs_[0-9A-Za-z]{32}$")


def test_sign_in_with_email_and_password_sets_a_console_token_cookie(owner: Any, acme: Any) -> None:
    client = Client(REMOTE_ADDR=_address())

    response = client.post("/console/sign-in/", {"email": "OLGA@acme.test", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/console/"
    cookie = response.cookies["sessionid"]
    assert TOKEN.match(cookie.value)
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["secure"] == ""  # local development (http on loopback): not Secure
    assert list(ConsoleSession.objects.values_list("session_key", "user")) == [(cookie.value, owner.pk)]
    assert client.get("/console/")["Location"] == f"/console/{acme.id}/"


def test_console_session_token_is_refused_on_the_api(owner: Any) -> None:
    client = signed_in(owner, _address())
    token = client.cookies["sessionid"].value

    response = Client().get("/v1/account", **bearer(token))

    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == "invalid_api_key"
    assert error["message"] == (
        "Console session tokens (svcx_cs_...) are not API keys. Create an API key and send that."
    )
    # ...and the session cookie alone is no way into the API either.
    assert client.get("/v1/account").json()["error"]["code"] == "missing_api_key"


def test_wrong_password_is_refused_and_signs_nobody_in(owner: Any) -> None:
    client = Client(REMOTE_ADDR=_address())

    response = client.post("/console/sign-in/", {"email": owner.email, "password": "not-it"})

    assert response.status_code == 200
    # Said once (the form's own errors, not a second copy above them).
    assert response.content.decode().count("The e-mail address or the password is wrong.") == 1
    assert ConsoleSession.objects.count() == 0
    assert client.get("/console/")["Location"] == "/console/sign-in/"


def test_sign_in_attempts_are_limited_per_address(owner: Any, settings: Any) -> None:
    settings.SVCX_LOGIN_ATTEMPTS_PER_MINUTE = 3
    guesser, other = Client(REMOTE_ADDR=_address()), Client(REMOTE_ADDR=_address())
    for _ in range(3):
        assert guesser.post("/console/sign-in/", {"email": owner.email, "password": "guess"}).status_code == 200

    blocked = guesser.post("/console/sign-in/", {"email": owner.email, "password": PASSWORD})

    assert blocked.status_code == 429
    assert blocked["Content-Type"].startswith("text/html")
    assert "Too many attempts from this address. Wait a minute, then try again." in blocked.content.decode()
    assert ConsoleSession.objects.count() == 0  # not even the right password got through
    assert other.post("/console/sign-in/", {"email": owner.email, "password": PASSWORD}).status_code == 302


def _person_with_window_left(acme: Any, settings: Any) -> Any:
    """A person whose address's failure window has time left: django-ratelimit counts in fixed
    windows whose edge depends on the counted value, and a test's attempts must not straddle one."""
    while True:
        email = f"p{secrets.token_hex(4)}@acme.test"
        if _get_window(email, settings.SVCX_LOGIN_FAILURES_WINDOW) - time.time() > 120:
            return make_person(acme, email)


def _fail_sign_ins(email_variants: list[str]) -> None:
    """One failed sign-in per variant, each from another client address."""
    for variant in email_variants:
        wrong = Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": variant, "password": "guess"})
        assert wrong.status_code == 200
        assert "The e-mail address or the password is wrong." in wrong.content.decode()


def _assert_refused_per_email(response: Any) -> str:
    assert response.status_code == 429
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert re.search(r"Too many failed sign-ins for this e-mail address\. Wait 1?\d minutes?, then try again\.", body)
    return re.sub(r"Wait \d+ minutes?", "Wait N minutes", body)


def test_failed_sign_ins_are_limited_per_email_from_any_address(acme: Any, settings: Any, monkeypatch: Any) -> None:
    settings.SVCX_LOGIN_FAILURES_PER_EMAIL = 3
    person = _person_with_window_left(acme, settings)
    # Case and surrounding spaces do not make another address.
    _fail_sign_ins([person.email, person.email.upper(), f"  {person.email.title()} "])
    checked: list[str] = []
    monkeypatch.setattr("console.forms.authenticate", lambda request, **kw: checked.append(kw["username"]))

    blocked = Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": person.email, "password": PASSWORD})

    _assert_refused_per_email(blocked)
    assert checked == []  # the password was not even checked
    assert ConsoleSession.objects.count() == 0


def test_the_limit_per_email_lets_the_right_password_in_below_it(acme: Any, settings: Any) -> None:
    settings.SVCX_LOGIN_FAILURES_PER_EMAIL = 3
    person = _person_with_window_left(acme, settings)
    _fail_sign_ins([person.email, person.email])

    allowed = Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": person.email, "password": PASSWORD})

    assert allowed.status_code == 302
    assert list(ConsoleSession.objects.values_list("user", flat=True)) == [person.pk]


def test_an_unknown_email_over_the_limit_gets_the_same_answer_as_a_known_one(acme: Any, settings: Any) -> None:
    settings.SVCX_LOGIN_FAILURES_PER_EMAIL = 2
    known = _person_with_window_left(acme, settings)
    unknown = _person_with_window_left(acme, settings)
    unknown.delete()  # an address whose window has time left, with no account behind it
    _fail_sign_ins([known.email, known.email, unknown.email, unknown.email])

    known_page = Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": known.email, "password": PASSWORD})
    unknown_page = Client(REMOTE_ADDR=_address()).post(
        "/console/sign-in/", {"email": unknown.email, "password": PASSWORD}
    )

    assert _assert_refused_per_email(known_page) == _assert_refused_per_email(unknown_page)
    assert ConsoleSession.objects.count() == 0


def test_the_limit_per_email_leaves_other_addresses_alone(acme: Any, settings: Any) -> None:
    settings.SVCX_LOGIN_FAILURES_PER_EMAIL = 2
    locked, other = _person_with_window_left(acme, settings), _person_with_window_left(acme, settings)
    _fail_sign_ins([locked.email, locked.email])
    guesser = Client(REMOTE_ADDR=_address())
    _assert_refused_per_email(guesser.post("/console/sign-in/", {"email": locked.email, "password": PASSWORD}))

    # The same client address, another e-mail address: signed in.
    allowed = guesser.post("/console/sign-in/", {"email": other.email, "password": PASSWORD})

    assert allowed.status_code == 302
    assert list(ConsoleSession.objects.values_list("user", flat=True)) == [other.pk]


def test_every_console_form_needs_the_csrf_token(owner: Any) -> None:
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=_address())

    refused = client.post("/console/sign-in/", {"email": owner.email, "password": PASSWORD})

    assert refused.status_code == 403
    assert ConsoleSession.objects.count() == 0
    page = client.get("/console/sign-in/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    accepted = client.post(
        "/console/sign-in/", {"email": owner.email, "password": PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert accepted.status_code == 302


def test_sign_out_ends_this_session_only(owner: Any, acme: Any) -> None:
    laptop, phone = signed_in(owner, _address()), signed_in(owner, _address())

    assert laptop.post("/console/sign-out/").status_code == 302

    assert laptop.get(f"/console/{acme.id}/")["Location"].startswith("/console/sign-in/")
    assert phone.get(f"/console/{acme.id}/").status_code == 200


def test_sign_out_everywhere_ends_every_session_of_the_person_only(owner: Any, acme: Any) -> None:
    laptop, phone = signed_in(owner, _address()), signed_in(owner, _address())
    colleague = signed_in(make_person(acme, "colin@acme.test"), _address())

    response = laptop.post("/console/sign-out-everywhere/", follow=True)

    assert "You are signed out everywhere (2 sessions ended)." in response.content.decode()
    assert phone.get(f"/console/{acme.id}/")["Location"].startswith("/console/sign-in/")
    assert laptop.get(f"/console/{acme.id}/")["Location"].startswith("/console/sign-in/")
    assert colleague.get(f"/console/{acme.id}/").status_code == 200
    assert AuditEvent.objects.filter(action="session.end_all", actor=owner).values_list("details", flat=True)[0] == {
        "ended": 2
    }


def test_password_reset_mails_a_single_use_link_to_the_public_address(
    owner: Any, mailoutbox: Any, settings: Any
) -> None:
    settings.SVCX_PUBLIC_URL = "https://svcx.example"
    other_session = signed_in(owner, _address())
    client = Client(REMOTE_ADDR=_address())

    response = client.post("/console/password-reset/", {"email": owner.email})

    assert response["Location"] == "/console/password-reset/sent/"
    assert [m.to for m in mailoutbox] == [[owner.email]]
    link = re.search(r"https://svcx\.example(/console/password-reset/\S+/)", mailoutbox[0].body).group(1)
    form_url = client.get(link)["Location"]  # Django swaps the token for a session-held one
    done = client.post(form_url, {"new_password1": "brand-new-password-2", "new_password2": "brand-new-password-2"})
    assert done["Location"] == "/console/password-reset/complete/"
    owner.refresh_from_db()
    assert owner.check_password("brand-new-password-2")
    used = client.get(link)
    assert used.status_code == 200
    assert "This link has been used or has expired" in used.content.decode()
    # The new password ends the sessions signed in with the old one.
    assert other_session.get("/console/")["Location"] == "/console/sign-in/"


def test_a_completed_password_reset_lifts_the_limit_on_failed_sign_ins(
    acme: Any, settings: Any, mailoutbox: Any
) -> None:
    settings.SVCX_LOGIN_FAILURES_PER_EMAIL = 2
    person, other = _person_with_window_left(acme, settings), _person_with_window_left(acme, settings)
    _fail_sign_ins([person.email, person.email, other.email, other.email])  # a stranger's guesses
    _assert_refused_per_email(
        Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": person.email, "password": PASSWORD})
    )
    client = Client(REMOTE_ADDR=_address())

    # Asking for a reset proves nothing: the limit stays until the link is used.
    client.post("/console/password-reset/", {"email": person.email.upper()})
    _assert_refused_per_email(
        Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": person.email, "password": PASSWORD})
    )
    link = re.search(r"https?://[^/\s]+(/console/password-reset/\S+/)", mailoutbox[0].body).group(1)
    form_url = client.get(link)["Location"]
    client.post(form_url, {"new_password1": "brand-new-password-3", "new_password2": "brand-new-password-3"})

    signed = Client(REMOTE_ADDR=_address()).post(
        "/console/sign-in/", {"email": person.email, "password": "brand-new-password-3"}
    )
    assert signed.status_code == 302
    # Only the address that was reset: another one stays limited.
    _assert_refused_per_email(
        Client(REMOTE_ADDR=_address()).post("/console/sign-in/", {"email": other.email, "password": PASSWORD})
    )


def test_password_reset_for_an_unknown_address_mails_nobody_and_says_the_same(mailoutbox: Any) -> None:
    response = Client(REMOTE_ADDR=_address()).post("/console/password-reset/", {"email": "nobody@acme.test"})

    assert response["Location"] == "/console/password-reset/sent/"
    assert mailoutbox == []


def _secure_cookies(env: dict[str, str]) -> str:
    code = "import django; django.setup(); from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE)"
    clean = {k: v for k, v in os.environ.items() if k not in ("SVCX_PUBLIC_URL", "SVCX_SECURE_COOKIES", "SVCX_BIND")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": "svcx.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_cookies_are_secure_outside_local_development() -> None:
    assert _secure_cookies({}) == "False False"  # http://127.0.0.1:8000, `make run`
    assert _secure_cookies({"SVCX_PUBLIC_URL": "https://svcx.example"}) == "True True"
    assert _secure_cookies({"SVCX_PUBLIC_URL": "http://svcx.internal"}) == "True True"
    assert _secure_cookies({"SVCX_PUBLIC_URL": "https://svcx.example", "SVCX_SECURE_COOKIES": "false"}) == "False False"
    assert _secure_cookies({"SVCX_SECURE_COOKIES": "true"}) == "True True"


def test_root_leads_a_person_to_the_console_and_the_api_stays_json(client: Client) -> None:
    assert client.get("/")["Location"] == "/console/"
    assert client.get("/login/")["Location"] == "/console/sign-in/"
    assert client.get("/console/")["Location"] == "/console/sign-in/"
    api = client.get("/v1/nothing-here")
    assert (api.status_code, api["Content-Type"]) == (404, "application/json")
    page = client.get("/console/nothing/here/either")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")
    assert "Not found" in page.content.decode()


def test_a_person_in_two_organizations_chooses_one(owner: Any, acme: Any, globex: Any) -> None:
    services.membership_add(organization=globex, user=owner, role="member")
    client = signed_in(owner, _address())

    page = client.get("/console/").content.decode()

    assert page.count('<a href="/console/org_') == 2
    assert f'<a href="/console/{acme.id}/">Acme</a> <span class="muted">(owner)</span>' in page
    assert f'<a href="/console/{globex.id}/">Globex</a> <span class="muted">(member)</span>' in page
    assert "Switch organization" in client.get(f"/console/{globex.id}/").content.decode()


def test_a_suspended_or_delinquent_organization_says_so_on_every_page(owner: Any, acme: Any) -> None:
    client = signed_in(owner, _address())
    assert 'id="org-status"' not in client.get(f"/console/{acme.id}/keys/").content.decode()

    services.organization_suspend(organization=acme)
    suspended = client.get(f"/console/{acme.id}/keys/").content.decode()
    services.organization_unsuspend(organization=acme)
    services.organization_mark_delinquent(organization=acme, debt=12)
    delinquent = client.get(f"/console/{acme.id}/statement/").content.decode()

    assert "This organization is suspended: its API keys are refused." in suspended
    assert "Spending is frozen while a dispute or chargeback is open (12 credits owed)" in delinquent
    # Each says where support is (SVCX_SUPPORT_CONTACT).
    assert 'Contact support at <a href="mailto:support@svcx.local">support@svcx.local</a>' in suspended
    assert 'billing support at <a href="mailto:support@svcx.local">support@svcx.local</a>' in delinquent

"""The console in a real browser (Debian's Chromium through Playwright): sign in, invite and
accept, create a key and call the API with it, rotate, revoke, the charts after conversions,
the CSV export, another organization's ids, changing the password, a job followed, its result
downloaded and another job canceled (at 1280 and 390 px). Every page visited is saved as a
screenshot under test-results/screenshots/console-*.png."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from playwright.sync_api import expect

from accounts.models import ApiKey, Membership
from accounts.services import membership_add
from billing.selectors import credits_get
from billing.usage import usage_copy
from conversion.async_runner import async_job_lead
from tests.browser import account_status, screenshot
from tests.conftest import WorkerProcess
from tests.console.conftest import PASSWORD, make_person
from tests.factories import bearer, make_job, make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]
SECRET = re.compile(r"svcx_sk_(?:live|test)_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}")


def sign_in(page: Any, base: str, email: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/console/")
    page.fill("#id_email", email)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


@pytest.fixture
def acme(live_server: Any, settings: Any) -> Any:
    settings.SVCX_PUBLIC_URL = live_server.url
    return make_org("Acme", credits=100)


@pytest.fixture
def owner_page(live_server: Any, page: Any, acme: Any) -> Any:
    """A tab signed in to the console as Acme's owner, through the sign-in form."""
    make_person(acme, "olga@acme.test", "owner")
    page.goto(f"{live_server.url}/")  # `/` leads a person to the console's sign-in
    expect(page.locator("h1")).to_have_text("Sign in to the svcx console")
    screenshot(page, "console-sign-in")
    sign_in(page, live_server.url, "olga@acme.test")
    page.wait_for_url(f"{live_server.url}/console/{acme.id}/")
    page.base = live_server.url
    page.org = acme
    return page


def test_owner_invites_a_colleague_who_accepts_and_signs_in(
    owner_page: Any, acme: Any, browser: Any, mailoutbox: Any
) -> None:
    owner_page.click("header nav >> text=Members")
    owner_page.fill("#id_email", "nina@acme.test")
    owner_page.select_option("#id_role", "admin")
    owner_page.click("#invite button[type=submit]")
    expect(owner_page.locator("ul.messages")).to_contain_text(
        "Invitation mailed to nina@acme.test as admin; the link works once and expires in 7 days."
    )
    expect(owner_page.locator("#invitations")).to_contain_text("nina@acme.test")
    screenshot(owner_page, "console-members-invited")
    assert [m.to for m in mailoutbox] == [["nina@acme.test"]]
    link = re.search(r"http://\S+/console/invitations/\S+", mailoutbox[0].body).group(0)

    guest = browser.new_context().new_page()
    guest.goto(link)
    expect(guest.locator("h1")).to_have_text("Join Acme")
    screenshot(guest, "console-invitation")
    guest.fill("#id_password", "nina-password-123")
    guest.fill("#id_password_again", "nina-password-123")
    guest.click("button[type=submit]")
    guest.wait_for_url(f"{owner_page.base}/console/{acme.id}/")
    expect(guest.locator("ul.messages")).to_contain_text("Welcome to Acme: you joined as admin.")
    expect(guest.locator("header .user")).to_have_text("nina@acme.test (admin)")
    assert Membership.objects.get(organization=acme, user__email="nina@acme.test").role == "admin"

    guest.goto(link)  # single use
    expect(guest.locator("h1")).to_have_text("This invitation link has been used or has expired")
    screenshot(guest, "console-invitation-used")

    # Signing out of every browser ends the guest's other sessions too.
    other = browser.new_context().new_page()
    sign_in(other, owner_page.base, "nina@acme.test", "nina-password-123")
    other.wait_for_url(f"{owner_page.base}/console/{acme.id}/")
    guest.goto(f"{owner_page.base}/console/{acme.id}/")
    guest.click("text=Sign out everywhere")
    expect(guest.locator("ul.messages")).to_contain_text("You are signed out everywhere (2 sessions ended).")
    other.goto(f"{owner_page.base}/console/{acme.id}/keys/")
    expect(other.locator("h1")).to_have_text("Sign in to the svcx console")


def test_owner_creates_a_key_calls_the_api_rotates_and_revokes(owner_page: Any, acme: Any) -> None:
    base = owner_page.base
    owner_page.click("header nav >> text=API keys")
    owner_page.click("text=Create a key")
    owner_page.fill("#id_name", "website")
    owner_page.fill("#id_project", "www")
    owner_page.check("input[name=preset][value=custom]")
    owner_page.check("input[name=scopes][value=convert]")
    owner_page.check("input[name=scopes][value='account:read']")
    owner_page.fill("#id_ip_allowlist", "127.0.0.1\n10.0.0.0/8")
    screenshot(owner_page, "console-key-create")
    owner_page.click("#key-create button[type=submit]")

    secret = owner_page.locator("#secret").inner_text().strip()
    assert SECRET.fullmatch(secret)
    owner_page.click("text=Copy the key")
    expect(owner_page.locator("button[data-copy]")).to_have_text("Copied")
    screenshot(owner_page, "console-key-secret")
    assert account_status(base, secret) == 200  # the new key works at once, from 127.0.0.1 (allowlisted)

    owner_page.click("text=Go to the key")
    key = ApiKey.objects.get(organization=acme, name="website")
    expect(owner_page.locator("#key-facts")).to_contain_text("convert, account:read")
    expect(owner_page.locator("#key-facts")).to_contain_text("10.0.0.0/8, 127.0.0.1/32")
    expect(owner_page.locator("#key-facts")).to_contain_text("olga@acme.test")
    assert SECRET.findall(owner_page.content()) == []
    screenshot(owner_page, "console-key-detail")

    owner_page.check("#rotate input[value=immediate]")
    owner_page.click("#rotate button[type=submit]")
    expect(owner_page.locator("h1")).to_have_text(f"Key {key.hint} rotated")
    replacement = owner_page.locator("#secret").inner_text().strip()
    screenshot(owner_page, "console-key-rotated")
    assert account_status(base, secret) == 401  # immediate overlap: the old key has expired
    assert account_status(base, replacement) == 200

    owner_page.click("text=Go to the key")
    owner_page.click("text=Revoke…")
    screenshot(owner_page, "console-key-revoke-confirm")
    assert account_status(base, replacement) == 200  # the confirmation page changed nothing
    owner_page.click("text=Revoke the key")
    expect(owner_page.locator("ul.messages")).to_contain_text("it is refused from the next request.")
    assert account_status(base, replacement) == 401

    owner_page.click("header nav >> text=API keys")
    # The expired and the revoked key are folded away below the keys in use (none left).
    expect(owner_page.locator("#keys tbody")).to_contain_text("No keys in use.")
    expect(owner_page.locator("#retired")).not_to_be_visible()
    owner_page.click("#retired-keys summary")
    rows = owner_page.locator("#retired tbody tr")
    expect(rows).to_have_count(2)
    expect(owner_page.locator("#retired")).to_contain_text("expired")
    expect(owner_page.locator("#retired")).to_contain_text("revoked")
    screenshot(owner_page, "console-keys")
    owner_page.click("header nav >> text=Audit log")
    latest = owner_page.locator("#audit tbody tr").first.locator("td")
    expect(latest.nth(1)).to_have_text("olga@acme.test")
    expect(latest.nth(2)).to_have_text("key.revoke")
    screenshot(owner_page, "console-audit")


def test_charts_after_conversions_and_the_statement_csv(
    owner_page: Any, acme: Any, session_worker: WorkerProcess, three_pages: Path
) -> None:
    web, tests_key = make_key(acme, name="web"), make_key(acme, "test", name="ci")
    client = Client()
    for secret, query in ((web.secret, ""), (web.secret, "?pages=1"), (tests_key.secret, "")):
        response = client.post(
            f"/v1/convert{query}", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(secret)
        )
        assert response.status_code == 200, response.content[:300]
    usage_copy()

    owner_page.goto(f"{owner_page.base}/console/{acme.id}/")
    expect(owner_page.locator("#live-balance")).to_contain_text("96 credits")
    expect(owner_page.locator("#test-allowance")).to_contain_text("3 of 5000 pages")
    expect(owner_page.locator("#usage-chart rect.bar")).to_have_count(2)  # today: one segment per key
    expect(owner_page.locator("#usage-chart .legend")).to_contain_text(f"{web.api_key.hint} web: 4 pages")
    expect(owner_page.locator("#usage-chart .legend")).to_contain_text(f"{tests_key.api_key.hint} ci: 3 pages")
    screenshot(owner_page, "console-spending-by-key")
    owner_page.click(".toggles >> text=credits")
    owner_page.click(".toggles >> text=by environment")
    expect(owner_page.locator("#usage-chart .legend")).to_contain_text("live: 4 credits")
    screenshot(owner_page, "console-spending-by-environment")

    owner_page.click("header nav >> text=Usage records")
    expect(owner_page.locator("#usage-records tbody tr")).to_have_count(2)  # live records
    screenshot(owner_page, "console-usage-records")

    owner_page.click("header nav >> text=Statement")
    owner_page.select_option("#id_kind", "capture")
    owner_page.click(".filters button[type=submit]")
    expect(owner_page.locator("#statement tbody tr")).to_have_count(2)
    screenshot(owner_page, "console-statement")
    with owner_page.expect_download() as download:
        owner_page.click("#statement-csv")
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    assert [(r["kind"], r["balance_change"], r["pages"], r["api_key_id"]) for r in rows] == [
        ("capture", "-1", "1", web.api_key.id),
        ("capture", "-3", "3", web.api_key.id),
    ]


def test_owner_reports_a_leak_and_downloads_the_activity_report(
    owner_page: Any, acme: Any, browser: Any, mailoutbox: Any
) -> None:
    leaked = make_key(acme, name="ci")
    assert account_status(owner_page.base, leaked.secret) == 200  # activity the report lists
    owner_page.goto(f"{owner_page.base}/console/{acme.id}/keys/{leaked.api_key.id}/")
    owner_page.click("text=Report as leaked…")
    screenshot(owner_page, "console-key-leak-confirm")
    owner_page.click("text=Revoke and issue a replacement")

    expect(owner_page.locator("ul.messages")).to_contain_text(f"Leak confirmed: {leaked.api_key.hint} revoked")
    expect(owner_page.locator("#leak-state")).to_contain_text("The link is unused")
    assert account_status(owner_page.base, leaked.secret) == 401
    with owner_page.expect_download() as download:
        owner_page.click("#activity-report")
    report = download.value.path().read_text().splitlines()
    assert len(report) == 2
    assert report[1].split(",")[2:5] == ["GET", "/v1/account", "200"]
    screenshot(owner_page, "console-key-leaked")

    # The mailed single-use link shows the replacement once; the key's page then says it was used.
    link = re.search(r"http://\S+/reveal/\S+", mailoutbox[0].body).group(0)
    holder = browser.new_context().new_page()
    holder.goto(link)
    holder.click("text=Show the key")
    replacement = SECRET.findall(holder.locator("pre").inner_text())[0]
    assert account_status(owner_page.base, replacement) == 200
    owner_page.reload()
    expect(owner_page.locator("#leak-state")).to_contain_text("The link was used at")


def test_another_organizations_pages_are_not_found(owner_page: Any, acme: Any) -> None:
    globex = make_org("Globex")
    gary = make_person(globex, "gary@globex.test", "owner")
    theirs = make_key(globex, actor=gary).api_key

    for url in (
        f"/console/{globex.id}/",
        f"/console/{globex.id}/keys/{theirs.id}/",
        f"/console/{acme.id}/keys/{theirs.id}/",
        f"/console/{acme.id}/keys/{theirs.id}/revoke/",
    ):
        response = owner_page.goto(f"{owner_page.base}{url}")
        assert response.status == 404, url
        expect(owner_page.locator("h1")).to_have_text("Not found")
    screenshot(owner_page, "console-other-organization")
    assert ApiKey.objects.get(pk=theirs.pk).revoked_at is None

    # Once invited to Globex too, the console lets the person choose, and Globex's pages open.
    membership_add(organization=globex, user=Membership.objects.get(organization=acme).user, role="member")
    owner_page.goto(f"{owner_page.base}/console/")
    expect(owner_page.locator("h1")).to_have_text("Your organizations")
    screenshot(owner_page, "console-home")
    owner_page.click("text=Globex")
    expect(owner_page.locator("header .user")).to_have_text("olga@acme.test (member)")
    owner_page.click("header nav >> text=API keys")
    expect(owner_page.locator("#keys")).to_contain_text(theirs.hint)
    expect(owner_page.locator("header nav")).not_to_contain_text("Audit log")  # a member's view


def test_files_and_password_reset_pages(owner_page: Any, acme: Any, browser: Any, mailoutbox: Any) -> None:
    owner_page.click("header nav >> text=Files")
    expect(owner_page.locator("#files")).to_contain_text("No stored files.")
    screenshot(owner_page, "console-files")

    stranger = browser.new_context().new_page()
    stranger.goto(f"{owner_page.base}/console/sign-in/")
    stranger.click("text=Forgot your password?")
    stranger.fill("#id_email", "olga@acme.test")
    screenshot(stranger, "console-password-reset")
    stranger.click("button[type=submit]")
    expect(stranger.locator("h1")).to_have_text("Check your mail")
    link = re.search(r"http://\S+/console/password-reset/\S+/", mailoutbox[0].body).group(0)
    stranger.goto(link)
    stranger.fill("#id_new_password1", "another-password-42")
    stranger.fill("#id_new_password2", "another-password-42")
    screenshot(stranger, "console-password-choose")
    stranger.click("button[type=submit]")
    expect(stranger.locator("h1")).to_have_text("Your password is changed")
    sign_in(stranger, owner_page.base, "olga@acme.test", "another-password-42")
    stranger.wait_for_url(f"{owner_page.base}/console/{acme.id}/")


def test_owner_changes_the_password_and_the_other_browser_is_signed_out(
    owner_page: Any, acme: Any, browser: Any
) -> None:
    phone = browser.new_context().new_page()
    sign_in(phone, owner_page.base, "olga@acme.test")
    phone.wait_for_url(f"{owner_page.base}/console/{acme.id}/")

    owner_page.click("header >> text=Change password")
    expect(owner_page.locator("h1")).to_have_text("Change your password")
    owner_page.fill("#id_old_password", PASSWORD)
    owner_page.fill("#id_new_password1", "changed-password-77")
    owner_page.fill("#id_new_password2", "changed-password-77")
    screenshot(owner_page, "console-password-change")
    owner_page.click("#password-change button[type=submit]")
    expect(owner_page.locator("ul.messages")).to_contain_text(
        "Your password is changed. 1 other session signed out; this one stays signed in."
    )
    screenshot(owner_page, "console-password-changed")

    owner_page.click("header nav >> text=API keys")  # this browser is still signed in
    expect(owner_page.locator("h1")).to_have_text("API keys")
    phone.reload()
    expect(phone.locator("h1")).to_have_text("Sign in to the svcx console")
    sign_in(phone, owner_page.base, "olga@acme.test", "changed-password-77")
    phone.wait_for_url(f"{owner_page.base}/console/{acme.id}/")


def no_overflow(tab: Any, what: str) -> None:
    """Nothing wider than the screen: tables scroll inside their own box, the header wraps."""
    overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{what} is {overflow} px wider than the viewport"


@pytest.mark.parametrize("width", [1280, 390])
def test_owner_follows_a_job_downloads_a_result_and_cancels_another(
    owner_page: Any, acme: Any, three_pages: Path, width: int
) -> None:
    owner_page.set_viewport_size({"width": width, "height": 900})
    minted = make_key(acme, name="batch")
    done = make_job(acme, minted.api_key, three_pages, webhook_metadata={"batch": "nightly-2026-11-27"})
    async_job_lead(job_id=done.id)
    waiting = make_job(acme, minted.api_key, three_pages, filename="a-long-file-name-of-the-annual-report-2026.pdf")

    owner_page.click("header nav >> text=Jobs")
    expect(owner_page.locator("h1")).to_have_text("Jobs")
    rows = owner_page.locator("#jobs tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text(waiting.id)
    expect(rows.nth(1)).to_contain_text("succeeded")
    no_overflow(owner_page, "the jobs page")
    screenshot(owner_page, f"console-jobs-{width}")

    owner_page.click(f"text={done.id}")
    expect(owner_page.locator("#job-progress")).to_contain_text("3 of 3 pages converted")
    expect(owner_page.locator("#job-metadata")).to_contain_text("nightly-2026-11-27")
    expect(owner_page.locator("#job-ledger tbody tr")).to_have_count(2)  # hold, capture
    no_overflow(owner_page, "a succeeded job's page")
    screenshot(owner_page, f"console-job-succeeded-{width}")
    with owner_page.expect_download() as download:
        owner_page.click("#job-result >> text=Markdown")
    assert download.value.path().read_text().startswith("<!-- page 1 -->\n\n")

    owner_page.goto(f"{owner_page.base}/console/{acme.id}/jobs/{waiting.id}/")
    owner_page.click("#job-cancel")
    expect(owner_page.locator("h1")).to_contain_text("Cancel the job")
    no_overflow(owner_page, "the cancel confirmation")
    screenshot(owner_page, f"console-job-cancel-confirm-{width}")
    owner_page.click("#cancel-job button[type=submit]")
    expect(owner_page.locator("ul.messages")).to_contain_text("its 3 held credits are released")
    expect(owner_page.locator("h1")).to_contain_text("canceled")
    expect(owner_page.locator("#job-ledger tbody tr").nth(1)).to_contain_text("release")
    expect(owner_page.locator("#job-cancel")).to_have_count(0)
    no_overflow(owner_page, "a canceled job's page")
    screenshot(owner_page, f"console-job-canceled-{width}")
    assert credits_get(organization=acme, environment="live").held == 0

"""Staff run the business from the admin in a real browser (Chromium through Playwright, with the
admin's CSS and JavaScript served): suspend, grant, refund, add a member, rotate, revoke, confirm
a leak. Each test asserts what the page shows and what changed; screenshots land in
test-results/screenshots/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from accounts.models import ApiKey, AuditEvent, Membership, Organization
from billing.models import LedgerEntry
from billing.selectors import credits_get
from tests.browser import account_status, screenshot
from tests.factories import make_job, make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]
SECRET = re.compile(r"svcx_sk_(?:live|test)_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}")


@pytest.fixture
def admin_page(live_server: Any, page: Any, settings: Any) -> Any:
    """A browser tab signed in to the admin as staff (through the login form)."""
    settings.SVCX_PUBLIC_URL = live_server.url
    get_user_model().objects.create_superuser("staff", "staff@example.com", "staff-password-1")
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "staff")
    page.fill("#id_password", "staff-password-1")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    page.base = live_server.url
    return page


def run_action(page: Any, changelist: str, pk: str, action: str) -> None:
    """Choose `action` for the row `pk` in the list's action menu: the confirmation page opens."""
    page.goto(f"{page.base}/admin/{changelist}/")
    page.check(f"input[name=_selected_action][value='{pk}']")
    page.select_option("select[name=action]", action)
    page.click("button[name=index]")


def confirm(page: Any, reason: str) -> None:
    """Give the reason on a confirmation page and confirm."""
    page.fill("#id_reason", reason)
    page.click("input[name=apply]")


def test_admin_is_styled(admin_page: Any) -> None:
    # The stylesheet applied: the header bar has the admin's colours, not the browser's default.
    background = admin_page.locator("#header").evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")
    screenshot(admin_page, "admin-index")


def test_staff_suspends_grants_and_refunds_and_sees_the_balance(admin_page: Any) -> None:
    org = make_org("Acme")

    run_action(admin_page, "accounts/organization", org.pk, "suspend")
    confirm(admin_page, "unpaid invoice")
    expect(admin_page.locator("ul.messagelist")).to_contain_text(f"Suspended Acme ({org.id})")
    assert Organization.objects.get(pk=org.pk).status == "suspended"
    screenshot(admin_page, "admin-org-suspended")

    run_action(admin_page, "accounts/organization", org.pk, "grant_credits")
    admin_page.fill("#id_credits", "30")
    admin_page.fill("#id_reason", "promotion")
    admin_page.click("input[name=apply]")
    expect(admin_page.locator("ul.messagelist")).to_contain_text(
        f"Granted 30 credits to Acme ({org.id}); live balance now 30"
    )

    run_action(admin_page, "accounts/organization", org.pk, "refund_or_adjust")
    admin_page.select_option("#id_kind", "refund")
    admin_page.fill("#id_credits", "5")
    admin_page.fill("#id_reason", "bad output")
    admin_page.click("input[name=apply]")
    expect(admin_page.locator("ul.messagelist")).to_contain_text(
        f"Refunded 5 credits: Acme ({org.id}), reason “bad output”; live balance now 35"
    )
    screenshot(admin_page, "admin-org-refunded")
    assert credits_get(organization=org, environment="live").balance == 35
    assert list(LedgerEntry.objects.filter(organization=org).values_list("kind", "credits")) == [
        ("refund", 5),
        ("grant", 30),
    ]

    admin_page.goto(f"{admin_page.base}/admin/accounts/organization/{quote(org.pk)}/change/")
    body = admin_page.locator("#content").inner_text()
    assert "balance 35 credits; held 0 by requests in flight; available 35" in body
    assert "0 of 5,000 pages used this month, 0 held" in body
    admin_page.click("text=ledger")
    assert "2 ledger entries" in admin_page.locator("#changelist-form").inner_text()
    screenshot(admin_page, "admin-org-ledger")


def test_staff_adds_a_member_with_the_user_search_and_changes_and_removes_members(admin_page: Any) -> None:
    org = make_org("Acme")
    users = get_user_model().objects
    alice = users.create_user("alice", "alice@example.com")
    bob = users.create_user("bob", "bob@example.com")
    change = f"{admin_page.base}/admin/accounts/organization/{quote(org.pk)}/change/"

    admin_page.goto(change)
    admin_page.click(".add-row a")
    admin_page.click("#memberships-0 .select2-selection")  # the user autocomplete (JavaScript)
    admin_page.fill(".select2-search__field", "ali")
    admin_page.click(".select2-results__option >> text=alice")
    admin_page.select_option("#id_memberships-0-role", "owner")
    screenshot(admin_page, "admin-member-adding")
    admin_page.click("input[name=_save]")

    expect(admin_page.locator("ul.messagelist")).to_contain_text(f"Members of Acme ({org.id}): added alice as owner.")
    assert list(Membership.objects.filter(organization=org).values_list("user__username", "role")) == [
        ("alice", "owner")
    ]

    # Demoting the only owner is refused, with the rule's reason, and changes nothing.
    admin_page.goto(change)
    admin_page.select_option("#id_memberships-0-role", "member")
    admin_page.click("input[name=_save]")
    expect(admin_page.locator("#content")).to_contain_text("would have no owner left")
    assert Membership.objects.get(organization=org).role == "owner"
    screenshot(admin_page, "admin-member-last-owner")

    # Bob added as owner, then alice removed: ownership handed over.
    admin_page.goto(change)
    admin_page.click(".add-row a")
    admin_page.click("#memberships-1 .select2-selection")
    admin_page.fill(".select2-search__field", "bob")
    admin_page.click(".select2-results__option >> text=bob")
    admin_page.select_option("#id_memberships-1-role", "owner")
    admin_page.click("input[name=_save]")
    expect(admin_page.locator("ul.messagelist")).to_contain_text("added bob as owner")
    admin_page.goto(change)
    row = admin_page.locator("tr.has_original", has_text="alice")
    row.locator("input[type=checkbox][name$=DELETE]").check()
    admin_page.click("input[name=_save]")
    expect(admin_page.locator("ul.messagelist")).to_contain_text(f"Members of Acme ({org.id}): removed alice.")
    assert list(Membership.objects.filter(organization=org).values_list("user", "role")) == [(bob.pk, "owner")]
    assert set(AuditEvent.objects.filter(organization=org).values_list("action", "target")) >= {
        ("member.add", "alice"),
        ("member.add", "bob"),
        ("member.remove", "alice"),
    }
    assert alice.pk not in Membership.objects.values_list("user", flat=True)


def test_staff_rotates_and_revokes_keys_without_ever_seeing_a_secret(admin_page: Any) -> None:
    org = make_org("Acme")
    first = make_key(org, name="web")

    run_action(admin_page, "accounts/apikey", first.api_key.pk, "rotate")
    admin_page.check("input[name=overlap][value='24h']")
    confirm(admin_page, "customer asked")
    replacement = ApiKey.objects.get(pk=first.api_key.pk).replaced_by
    expect(admin_page.locator("ul.messagelist")).to_contain_text(
        f"Rotated {first.api_key.hint}: replacement {replacement.hint}"
    )
    assert not SECRET.findall(admin_page.content())  # the new secret is the organization's, not staff's
    link = admin_page.locator("code.reveal-link").inner_text()  # nobody to mail: the link, to hand over
    screenshot(admin_page, "admin-key-rotated")
    assert account_status(admin_page.base, first.secret) == 200  # the old key's overlap: 24 more hours

    admin_page.goto(link)
    admin_page.click("text=Show the key")
    secret = SECRET.findall(admin_page.locator("pre").inner_text())[0]
    assert account_status(admin_page.base, secret) == 200

    run_action(admin_page, "accounts/apikey", replacement.pk, "revoke")
    confirm(admin_page, "customer asked")
    expect(admin_page.locator("ul.messagelist")).to_contain_text(
        f"Revoked {replacement.hint}: refused from the next request."
    )
    assert account_status(admin_page.base, secret) == 401
    screenshot(admin_page, "admin-key-revoked")


def test_staff_confirms_a_leak_and_gets_the_reveal_link_when_nobody_can_be_mailed(admin_page: Any) -> None:
    org = make_org("Nobody home")  # no members, and the key has no creator: nobody to mail
    leaked = make_key(org, name="ci")
    assert account_status(admin_page.base, leaked.secret) == 200  # activity the report will list

    run_action(admin_page, "accounts/apikey", leaked.api_key.pk, "confirm_leak")
    confirm(admin_page, "posted in a public gist")

    replacement = ApiKey.objects.get(pk=leaked.api_key.pk).replaced_by
    expect(admin_page.locator("ul.messagelist")).to_contain_text(
        f"Leak confirmed: {leaked.api_key.hint} revoked; replacement {replacement.hint} issued; nobody to mail"
    )
    link = admin_page.locator("code.reveal-link").inner_text()
    assert link.startswith(f"{admin_page.base}/reveal/")
    assert not SECRET.findall(admin_page.content())  # the secret itself is never shown to staff
    screenshot(admin_page, "admin-leak-confirmed")
    assert account_status(admin_page.base, leaked.secret) == 401

    # The leak report, reachable from the key.
    admin_page.goto(f"{admin_page.base}/admin/accounts/apikey/{quote(leaked.api_key.pk)}/change/")
    assert f"replacement {replacement.hint}; its reveal link is unused" in admin_page.locator("#content").inner_text()
    with admin_page.expect_download() as download:
        admin_page.click("text=Download the 90-day activity report (CSV)")
    report = download.value.path().read_text()
    assert report.splitlines()[0].startswith("created_at,request_id")
    assert len(report.splitlines()) == 2  # the one request made with the leaked key
    screenshot(admin_page, "admin-leaked-key")

    # The link shows the replacement once, and it works.
    admin_page.goto(link)
    admin_page.click("text=Show the key")
    secret = SECRET.findall(admin_page.locator("pre").inner_text())[0]
    assert account_status(admin_page.base, secret) == 200
    admin_page.goto(link)
    admin_page.click("text=Show the key")
    assert "This link has been used or has expired" in admin_page.locator("h1").inner_text()


def test_staff_is_told_who_was_mailed_when_there_are_owners(admin_page: Any, mailoutbox: Any) -> None:
    org = make_org("Acme")
    owner = get_user_model().objects.create_user("olga", "olga@example.com")
    Membership.objects.create(organization=org, user=owner, role="owner")
    leaked = make_key(org)

    run_action(admin_page, "accounts/apikey", leaked.api_key.pk, "confirm_leak")
    confirm(admin_page, "posted in a public gist")

    expect(admin_page.locator("ul.messagelist")).to_contain_text("the reveal link was mailed to olga@example.com")
    assert admin_page.locator("code.reveal-link").count() == 0
    assert [m.to for m in mailoutbox] == [["olga@example.com"]]


def test_read_only_lists_of_jobs_files_and_usage_exist_with_filters(admin_page: Any, three_pages: Any) -> None:
    org = make_org("Acme", credits=10)
    make_job(org, make_key(org).api_key, three_pages)  # a row: the list's columns show
    for path, filter_title in (
        ("conversion/conversionjob", "By status"),
        ("conversion/job", "By status"),
        ("conversion/storedfile", "By state"),
        ("billing/usagerecord", "By endpoint"),
    ):
        admin_page.goto(f"{admin_page.base}/admin/{path}/")
        assert filter_title.lower() in admin_page.locator("#changelist-filter").inner_text().lower(), path
        assert admin_page.locator(".object-tools a.addlink").count() == 0, path  # nothing to add
        if path == "conversion/job":  # the status and the error code in view at 1280 px, beside the filters
            for column in ("status", "error_code"):
                box = admin_page.locator(f"#result_list th.column-{column}").bounding_box()
                assert box is not None, (path, column)
                assert box["x"] + box["width"] <= 1280, (path, column)
            screenshot(admin_page, "admin-v2-jobs")
    screenshot(admin_page, "admin-usage-records")
    admin_page.goto(f"{admin_page.base}/admin/")
    assert "Ledger entries" in admin_page.locator("#content").inner_text()
    assert "Ledger entrys" not in admin_page.content()

"""The admin asks first, in a real browser at a desktop's width (1280 px) and a phone's (390 px):
the confirmation pages of suspend, revoke and confirm leak (Cancel changes nothing; the reason
lands in the audit log), the actions on an organization's and a key's page, a staff rotation that
shows no secret, the jobs list with status and error code in view, the branded site. Screenshots:
test-results/screenshots/admin-*-<width>.png."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import expect

from accounts.models import ApiKey, AuditEvent, Organization
from tests.accounts.test_admin_browser import confirm, run_action
from tests.browser import account_status, screenshot
from tests.conversion.test_admin import make_job
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]
SECRET = re.compile(r"svcx_sk_(?:live|test)_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}")
WIDTHS = [1280, 390]


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def tab(request: Any, live_server: Any, page: Any, settings: Any) -> Any:
    """An admin tab signed in as staff, at the width under test. The session is made by Django's
    test client: signing in through the form in every test would meet the login's limit per
    address (test_admin_browser.py signs in through the form)."""
    settings.SVCX_PUBLIC_URL = live_server.url
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("staff", "staff@example.com", "pw-1"))
    cookie = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": django_settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    page.set_viewport_size({"width": request.param, "height": 900 if request.param > 400 else 844})
    page.base, page.width = live_server.url, request.param
    return page


def shot(tab: Any, name: str) -> None:
    screenshot(tab, f"admin-{name}-{tab.width}")


def fits_width(tab: Any) -> None:
    """Nothing makes the page wider than the window (tables scroll inside their own box)."""
    assert tab.evaluate("document.documentElement.scrollWidth") <= tab.width


# The element the window shows at the middle of the cell is the cell or inside it (not another
# element laid over it, nor nothing because the cell is scrolled out of its box).
SHOWN_AT_ITS_PLACE = """cell => {
  const r = cell.getBoundingClientRect();
  const shown = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return shown !== null && cell.contains(shown);
}"""


def _audit_reason(action: str) -> str:
    return str(AuditEvent.objects.get(action=action).details["reason"])


def test_suspend_from_the_list_asks_first_and_cancel_changes_nothing(tab: Any) -> None:
    org = make_org("Acme")

    run_action(tab, "accounts/organization", org.pk, "suspend")

    content = tab.locator("#content")
    expect(content).to_contain_text("Every request of these organizations is refused from the next one")
    expect(tab.locator("ul.svcx-targets")).to_have_text(f"Acme ({org.pk})")
    expect(tab.locator("#id_reason")).to_be_visible()
    expect(tab.locator("input[name=apply]")).to_be_in_viewport()
    fits_width(tab)
    shot(tab, "confirm-suspend")
    tab.click("text=Cancel")
    tab.wait_for_url(f"{tab.base}/admin/accounts/organization/")
    assert Organization.objects.get(pk=org.pk).suspended_at is None

    run_action(tab, "accounts/organization", org.pk, "suspend")
    tab.click("input[name=apply]")  # no reason: the browser keeps the page and says why
    assert tab.evaluate("document.querySelector('#id_reason').validity.valueMissing")
    assert Organization.objects.get(pk=org.pk).suspended_at is None
    confirm(tab, "fraud case 12")

    expect(tab.locator("ul.messagelist")).to_contain_text(f"Suspended Acme ({org.pk})")
    assert Organization.objects.get(pk=org.pk).status == "suspended"
    assert _audit_reason("organization.suspend") == "fraud case 12"
    tab.goto(f"{tab.base}/admin/accounts/auditevent/")
    expect(tab.locator("#result_list")).to_contain_text("fraud case 12")
    shot(tab, "audit-log-reason")


def test_revoke_from_the_list_asks_first_with_a_reason(tab: Any) -> None:
    minted = make_key(make_org("Acme"), name="web")

    run_action(tab, "accounts/apikey", minted.api_key.pk, "revoke")

    expect(tab.locator("#content")).to_contain_text("Requests with these keys are refused from the next one")
    expect(tab.locator("ul.svcx-targets")).to_contain_text(minted.api_key.hint)
    assert account_status(tab.base, minted.secret) == 200
    fits_width(tab)
    shot(tab, "confirm-revoke")
    confirm(tab, "customer asked by phone")

    expect(tab.locator("ul.messagelist")).to_contain_text(f"Revoked {minted.api_key.hint}")
    assert account_status(tab.base, minted.secret) == 401
    assert _audit_reason("key.revoke") == "revoked by staff: customer asked by phone"


def test_confirm_leak_from_the_list_asks_first_and_shows_no_secret(tab: Any) -> None:
    minted = make_key(make_org("Nobody home"), name="ci")

    run_action(tab, "accounts/apikey", minted.api_key.pk, "confirm_leak")

    expect(tab.locator("#content")).to_contain_text("Each key is revoked now and gets a replacement")
    expect(tab.locator("#content")).to_contain_text("The replacement is not shown here")
    assert account_status(tab.base, minted.secret) == 200
    fits_width(tab)
    shot(tab, "confirm-leak")
    confirm(tab, "posted in a public gist")

    expect(tab.locator("ul.messagelist")).to_contain_text(f"Leak confirmed: {minted.api_key.hint} revoked")
    expect(tab.locator("code.reveal-link")).to_be_visible()
    assert not SECRET.findall(tab.content())
    fits_width(tab)
    shot(tab, "leak-confirmed")
    assert account_status(tab.base, minted.secret) == 401
    assert _audit_reason("key.confirm_leak") == "posted in a public gist"


def test_the_organization_page_carries_its_actions(tab: Any) -> None:
    org = make_org("Acme")
    change = f"{tab.base}/admin/accounts/organization/{quote(org.pk)}/change/"
    tab.goto(change)

    tools = tab.locator(".object-tools a.svcx-object-action")
    expect(tools).to_have_text(
        ["Suspend", "Mark delinquent (freeze spending)", "Grant credits", "Refund or adjust credits"]
    )
    expect(tools.first).to_be_in_viewport()
    assert tab.locator(".deletelink").count() == 0  # organizations are suspended, never deleted
    fits_width(tab)
    shot(tab, "org-page-actions")

    tools.filter(has_text="Suspend").click()
    expect(tab.locator("ul.svcx-targets")).to_have_text(f"Acme ({org.pk})")
    shot(tab, "org-page-confirm-suspend")
    confirm(tab, "unpaid invoice")

    tab.wait_for_url(change)
    expect(tab.locator("ul.messagelist")).to_contain_text(f"Suspended Acme ({org.pk})")
    expect(tools.first).to_have_text("Lift suspension")
    assert _audit_reason("organization.suspend") == "unpaid invoice"

    tools.filter(has_text="Grant credits").click()
    tab.fill("#id_credits", "25")
    confirm(tab, "goodwill")
    tab.wait_for_url(change)
    expect(tab.locator("#content")).to_contain_text("balance 25 credits")
    shot(tab, "org-page-after-actions")


def test_rotation_from_the_key_page_delivers_a_reveal_link_never_the_secret(tab: Any) -> None:
    old = make_key(make_org("Nobody home"), name="web")
    tab.goto(f"{tab.base}/admin/accounts/apikey/{quote(old.api_key.pk)}/change/")
    tools = tab.locator(".object-tools a.svcx-object-action")
    expect(tools).to_have_text(
        [
            "Rotate (replacement by reveal link)",
            "Revoke (irreversible)",
            "Confirm leak (revoke, replacement by reveal link)",
        ]
    )
    shot(tab, "key-page-actions")

    tools.filter(has_text="Rotate").click()
    expect(tab.locator("#content")).to_contain_text("The replacement is not shown here")
    tab.check("input[name=overlap][value='1h']")
    fits_width(tab)
    shot(tab, "key-page-confirm-rotate")
    confirm(tab, "customer asked")

    replacement = ApiKey.objects.get(pk=old.api_key.pk).replaced_by
    expect(tab.locator("ul.messagelist")).to_contain_text(f"Rotated {old.api_key.hint}: replacement {replacement.hint}")
    link = tab.locator("code.reveal-link").inner_text()
    staff_page = tab.content()
    fits_width(tab)
    shot(tab, "key-rotated-by-reveal")
    tab.goto(link)
    tab.click("text=Show the key")
    secret = SECRET.findall(tab.locator("pre").inner_text())[0]

    assert secret not in staff_page
    assert not SECRET.findall(staff_page)
    assert account_status(tab.base, secret) == 200
    assert account_status(tab.base, old.secret) == 200  # one more hour
    tab.goto(f"{tab.base}/admin/accounts/apikey/{quote(old.api_key.pk)}/change/")
    assert secret not in tab.content()
    expect(tab.locator(".object-tools a.svcx-object-action")).to_have_text(
        ["Revoke (irreversible)", "Confirm leak (revoke, replacement by reveal link)"]
    )


def test_no_delete_is_offered_for_organizations(tab: Any) -> None:
    org = make_org("Acme")
    tab.goto(f"{tab.base}/admin/accounts/organization/")
    options = tab.locator("select[name=action] option").evaluate_all("os => os.map(o => o.value)")
    assert "delete_selected" not in options
    assert "suspend" in options
    fits_width(tab)
    shot(tab, "org-list-actions")
    assert Organization.objects.filter(pk=org.pk).exists()


def _jobs() -> None:
    org = make_org("Acme Corporation International")
    for i, (status, code) in enumerate(
        [("failed", "pdf_encrypted"), ("succeeded", None), ("failed", "pdf_invalid"), ("abandoned", "client_gone")]
    ):
        make_job(org, f"req_{'Zz' * 8}{i:04d}{'q' * 8}", i, status, code, pages_billed=3, credits_billed=3)


def test_the_jobs_list_is_newest_first_with_status_and_error_code_in_view(tab: Any) -> None:
    _jobs()
    tab.goto(f"{tab.base}/admin/conversion/conversionjob/")

    first = tab.locator("#result_list tbody tr").first
    expect(first.locator("td.field-status")).to_have_text("Failed")
    expect(first.locator("td.field-error_code")).to_have_text("pdf_encrypted")
    expect(tab.locator("#result_list tbody td.field-error_code")).to_have_text(
        ["pdf_encrypted", "-", "pdf_invalid", "client_gone"]
    )
    expect(tab.locator("#changelist-filter")).to_contain_text("By error code")
    fits_width(tab)
    shot(tab, "jobs-list")
    # Both columns are on screen without scrolling anything sideways, at a desktop's width beside
    # the admin's navigation and the filters, and on a phone: inside the window and the table's
    # own box, and what the window shows at their place.
    results = tab.locator("#changelist .results").bounding_box()
    for column in ("th.column-status", "th.column-error_code", "td.field-status", "td.field-error_code"):
        cell = tab.locator(f"#result_list {column}").first
        box = cell.bounding_box()
        assert box is not None, column
        assert 0 <= box["x"] <= box["x"] + box["width"] <= min(tab.width, results["x"] + results["width"]), column
        assert cell.evaluate(SHOWN_AT_ITS_PLACE), column
    assert tab.evaluate("document.querySelector('#changelist .results').scrollLeft") == 0


def test_the_admin_is_branded(tab: Any) -> None:
    tab.goto(f"{tab.base}/admin/")
    expect(tab.locator("#site-name")).to_have_text("svcx admin")
    assert tab.title() == "Staff administration | svcx admin"
    assert tab.locator("link[rel=icon]").get_attribute("href") == "/favicon.ico"
    fits_width(tab)
    shot(tab, "index-branded")

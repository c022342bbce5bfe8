"""Webhooks in the console in a real browser (Debian's Chromium) at a desktop's width (1280 px)
and a phone's (390 px), with a real Celery worker delivering to a receiver on 127.0.0.1: an owner
adds an endpoint and copies its secret, which verifies the delivery that follows; the delivery log
shows it; a resend makes a second attempt; rotation, disabling and deleting. No page is wider than
the screen or breaks its Content-Security-Policy. Screenshots: test-results/screenshots/console-webhook*-<width>.png."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from svcx_client.webhooks import verify

from tests.browser import screenshot
from tests.conftest import WorkerProcess
from tests.console.conftest import make_person
from tests.console.test_page_security_browser import signed_in_tab
from tests.factories import make_org
from tests.webhooks.receiver import Receiver, running
from tests.webhooks.workers import module_worker
from webhooks.models import WebhookAttempt, WebhookEndpoint
from webhooks.services import webhook_event_emit

pytestmark = [pytest.mark.django_db(transaction=True)]
WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def hooks_worker(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[WorkerProcess, str]]:
    yield from module_worker("consolehooks", django_db_blocker, tmp_path_factory)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from running(Receiver())


@pytest.fixture
def acme(live_server: Any, settings: Any, hooks_worker: tuple[WorkerProcess, str]) -> Any:
    settings.SVCX_PUBLIC_URL = live_server.url
    settings.SVCX_QUEUE_PREFIX = hooks_worker[1]  # events go to that worker's queue
    org = make_org("Acme")
    make_person(org, "olga@acme.test", "owner")
    return org


def fits(tab: Any, what: str) -> None:
    overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{what} is {overflow} px wider than the viewport"


def shot(tab: Any, name: str, width: int) -> Path:
    fits(tab, name)
    return screenshot(tab, f"console-{name}-{width}")


def until(tab: Any, check: Callable[[], bool], timeout: float = 30) -> None:
    """Reload the page until `check` holds (the worker writes the log meanwhile)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        time.sleep(0.3)
        tab.reload()


@pytest.mark.parametrize("width", WIDTHS)
def test_an_owner_adds_an_endpoint_gets_a_verified_delivery_resends_rotates_disables_and_deletes(
    live_server: Any, browser: Any, acme: Any, receiver: Receiver, width: int
) -> None:
    base = live_server.url
    tab, violations = signed_in_tab(browser, base, width)  # as olga@acme.test

    tab.click("header nav >> text=Webhooks")
    expect(tab.locator("h1")).to_have_text("Webhooks")
    expect(tab.locator("#webhooks tbody")).to_contain_text("No endpoints yet.")
    shot(tab, "webhooks-empty", width)
    tab.click("text=Add an endpoint")
    tab.fill("#id_url", receiver.url)
    tab.fill("#id_description", "order service")
    tab.check("input[name=events][value='job.succeeded']")
    tab.check("input[name=events][value='job.failed']")
    shot(tab, "webhook-add", width)
    tab.click("#webhook-create button[type=submit]")

    expect(tab.locator("h1")).to_have_text("Endpoint created")
    secret = tab.locator("#secret").inner_text().strip()
    assert secret.startswith("whsec_")
    tab.click("text=Copy the secret")
    expect(tab.locator("button[data-copy]")).to_have_text("Copied")
    shot(tab, "webhook-secret", width)

    # A job ends: the worker delivers the event, signed with the secret the page showed.
    event = webhook_event_emit(organization=acme, type="job.succeeded", data={"id": "job_1", "pages_billed": 2})
    [got] = receiver.wait_for(1)
    assert verify(got.body, got.headers["svcx-signature"], secret)["id"] == event.id

    tab.click("text=Go to the endpoint")
    row = tab.locator(f"#deliveries tr[data-event='{event.id}']")
    until(tab, lambda: "succeeded" in row.inner_text())
    expect(row).to_contain_text("job.succeeded")
    expect(row.locator("td").nth(4)).to_have_text("200")
    expect(tab.locator("#endpoint-facts")).to_contain_text(receiver.url)
    expect(tab.locator("#endpoint-facts")).to_contain_text("job.succeeded, job.failed")
    assert secret not in tab.content()
    shot(tab, "webhook-detail", width)

    row.locator("text=Resend").click()
    expect(tab.locator("ul.messages")).to_contain_text(f"Sending {event.id} again")
    until(tab, lambda: row.locator("td").nth(3).inner_text() == "2")
    row.locator(f"text={event.id}").click()
    expect(tab.locator("#attempts tbody tr")).to_have_count(2)
    expect(tab.locator("#attempts tr[data-attempt='2']")).to_contain_text("2 (resend)")
    expect(tab.locator("#event-body")).to_contain_text('"pages_billed": 2')
    shot(tab, "webhook-delivery", width)
    assert [(a.number, a.manual, a.response_code) for a in WebhookAttempt.objects.order_by("number")] == [
        (1, False, 200),
        (2, True, 200),
    ]
    assert len(receiver.seen) == 2

    tab.click("#delivery-facts a")
    tab.check("#rotate input[value=immediate]")
    tab.click("#rotate button[type=submit]")
    expect(tab.locator("h1")).to_have_text("Signing secret rotated")
    rotated = tab.locator("#secret").inner_text().strip()
    assert rotated not in (secret, "")
    shot(tab, "webhook-rotated", width)

    tab.click("text=Go to the endpoint")
    tab.click("#disable button[type=submit]")
    expect(tab.locator("h1")).to_contain_text("disabled")
    expect(tab.locator("#disabled-reason")).to_contain_text("disabled by olga@acme.test")
    shot(tab, "webhook-disabled", width)
    tab.click("text=Delete…")
    expect(tab.locator("h1")).to_have_text("Delete the webhook endpoint?")
    shot(tab, "webhook-delete-confirm", width)
    tab.click("text=Delete the endpoint")
    expect(tab.locator("ul.messages")).to_contain_text("and its delivery log.")
    expect(tab.locator("#webhooks tbody")).to_contain_text("No endpoints yet.")
    assert not WebhookEndpoint.objects.exists()

    tab.context.close()
    assert violations == []

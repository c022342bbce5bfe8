"""The console, the reveal page and the docs under their Content-Security-Policy in a real browser
(Debian's Chromium): every page renders and reports no violation at 1280 and 390 px wide, the
copy button and the confirmation before deleting a file still work, and no page shows inside a
frame of another site. Screenshots: test-results/screenshots/csp-*.png."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.services import api_key_confirm_leak
from billing.models import RequestLog
from billing.usage import usage_copy
from conversion.async_runner import async_job_lead
from conversion.models import StoredFile
from tests.browser import screenshot, watch_csp
from tests.console.conftest import PASSWORD, make_person
from tests.console.test_scoping import stored_file
from tests.console.test_spending import used
from tests.factories import make_job, make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]
WIDTHS = (1280, 390)
PAGES = [
    "",
    "statement/",
    "usage/",
    "jobs/",
    "keys/",
    "keys/new/",
    "members/",
    "files/",
    "webhooks/",
    "webhooks/new/",
    "audit/",
    "password/",
]


@pytest.fixture
def acme(live_server: Any, settings: Any, three_pages: Path) -> Any:
    settings.SVCX_PUBLIC_URL = live_server.url
    org = make_org("Acme", credits=100)
    make_person(org, "olga@acme.test", "owner")
    live, test = make_key(org, "live"), make_key(org, "test")
    for days_ago, key in ((1, live), (2, test), (3, live)):
        used(org, key.api_key, days_ago=days_ago, pages=3, credits=3)  # the chart has bars and a legend
    usage_copy()
    done = make_job(org, live.api_key, three_pages, webhook_metadata={"batch": "nightly", "customer": 42})
    async_job_lead(job_id=done.id)
    waiting = make_job(org, live.api_key, three_pages, filename="a-long-file-name-of-the-annual-report-2026.pdf")
    return SimpleNamespace(
        org=org, id=org.id, minted=live, file=stored_file(org, live, three_pages), jobs=(done.id, waiting.id)
    )


def signed_in_tab(browser: Any, base: str, width: int) -> tuple[Any, list[str]]:
    tab = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    violations = watch_csp(tab)
    tab.goto(f"{base}/console/sign-in/")
    tab.fill("#id_email", "olga@acme.test")
    tab.fill("#id_password", PASSWORD)
    tab.click("button[type=submit]")
    tab.wait_for_url(f"{base}/console/*/")
    return tab, violations


@pytest.mark.parametrize("width", WIDTHS)
def test_console_pages_render_without_a_csp_violation(live_server: Any, browser: Any, acme: Any, width: int) -> None:
    base = live_server.url
    tab, violations = signed_in_tab(browser, base, width)
    request_id = RequestLog.objects.filter(organization=acme.org).values_list("request_id", flat=True).first()
    pages = [
        *PAGES,
        f"keys/{acme.minted.api_key.id}/",
        f"keys/{acme.minted.api_key.id}/revoke/",
        f"requests/{request_id}/",
        *(f"jobs/{job_id}/" for job_id in acme.jobs),
        f"jobs/{acme.jobs[1]}/cancel/",
    ]

    for page in pages:
        response = tab.goto(f"{base}/console/{acme.id}/{page}")
        assert response is not None
        assert response.status == 200, page
        assert response.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        screenshot(tab, f"csp-{width}-console-{page.strip('/').replace('/', '-') or 'spending'}")
        # Nothing wider than the screen: tables scroll inside their own box, the header wraps.
        overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{page} is {overflow} px wider than the {width} px viewport"
    tab.goto(f"{base}/console/{acme.id}/")
    # The legend's colours, drawn without style attributes, still show.
    expect(tab.locator("#usage-chart .legend svg.swatch rect")).not_to_have_count(0)

    tab.context.close()
    assert violations == []


def test_moved_scripts_still_work_under_the_policy(live_server: Any, browser: Any, acme: Any) -> None:
    base = live_server.url
    tab, violations = signed_in_tab(browser, base, 1280)
    files = f"{base}/console/{acme.id}/files/"
    tab.goto(files)

    # The confirmation before a delete (once an onsubmit attribute) still asks, and a "no" keeps the file.
    questions: list[str] = []

    def answer(yes: bool) -> Callable[[Any], None]:
        def reply(dialog: Any) -> None:
            questions.append(dialog.message)
            dialog.accept() if yes else dialog.dismiss()

        return reply

    tab.once("dialog", answer(False))
    tab.click("text=Delete")
    tab.wait_for_timeout(300)
    assert StoredFile.objects.get(pk=acme.file.pk).deleted_at is None
    tab.once("dialog", answer(True))
    tab.click("text=Delete")
    expect(tab.locator("ul.messages")).to_contain_text("Deleted x.pdf.")
    assert questions == ["Delete this file?", "Delete this file?"]
    assert StoredFile.objects.get(pk=acme.file.pk).deleted_at is not None

    # The copy button (console.js) on the single-use reveal page and the key's secret page.
    leak = api_key_confirm_leak(api_key=make_key(acme.org).api_key)
    tab.goto(leak.reveal_url)
    tab.click("text=Show the key")
    expect(tab.locator("pre code")).to_contain_text("svcx_sk_live_")
    screenshot(tab, "csp-1280-reveal-shown")
    tab.goto(f"{base}/console/{acme.id}/keys/new/")
    tab.fill("#id_name", "copied")
    tab.click("#key-create button[type=submit]")
    tab.click("text=Copy the key")
    expect(tab.locator("button[data-copy]")).to_have_text("Copied")

    tab.context.close()
    assert violations == []


@pytest.mark.parametrize("width", WIDTHS)
def test_docs_and_reveal_pages_render_without_a_csp_violation(live_server: Any, page: Any, width: int) -> None:
    # The `page` fixture fails the test on any violation.
    page.set_viewport_size({"width": width, "height": 900})
    for path in ("/docs/", "/docs/quickstart", "/docs/errors/file_too_large", "/reveal/never-issued", "/console/x/y"):
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None
        assert response.headers["x-frame-options"] == "DENY"
        # The stylesheet moved out of the page still applies (the docs' body is a centred column).
        assert page.evaluate("getComputedStyle(document.body).fontFamily") != ""
        screenshot(page, f"csp-{width}-{path.strip('/').replace('/', '-')}")
    page.goto(f"{live_server.url}/docs/")
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "800px"  # 50rem, from docs.css


@pytest.fixture
def other_site(live_server: Any) -> Iterator[str]:
    """Another origin on this machine (another port of 127.0.0.1) whose page frames the console
    and, beside it, an API answer (which may be framed: it is no page)."""
    body = (
        f'<iframe id="victim" src="{live_server.url}/console/sign-in/" width="600" height="400"></iframe>'
        f'<iframe id="control" src="{live_server.url}/v1/health" width="600" height="100"></iframe>'
    ).encode()

    class Framing(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the name http.server calls
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Framing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


def test_a_console_page_does_not_show_inside_another_sites_frame(browser: Any, other_site: str) -> None:
    # Chromium reports the refusal as a violation: a tab of its own, not the `page` fixture.
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(other_site)

    expect(page.frame_locator("#control").locator("body")).to_contain_text('"database"')  # framing itself works
    page.wait_for_timeout(500)
    expect(page.frame_locator("#victim").locator("#id_email")).to_have_count(0)
    screenshot(page, "csp-1280-framed-console-refused")
    page.context.close()

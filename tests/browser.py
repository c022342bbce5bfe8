"""A real browser for the tests of what a person sees (admin, console, docs).

Debian's Chromium (`/usr/bin/chromium`, installed by `.ci/run` when missing) driven by
Playwright's Python package; never a browser downloaded by `playwright install`. Screenshots land
under `test-results/screenshots/` so a person can look at what the test saw.

`tests/conftest.py` makes the `browser` (one Chromium per test process) and `page` (a fresh
context per test) fixtures available everywhere; use `page` and `screenshot(page, "name")`.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path(os.environ.get("SVCX_TEST_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parent.parent / "test-results" / "screenshots"


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing: apt-get install -y chromium (.ci/run does this)"
    if os.environ.get("CI"):
        pytest.fail(message)  # CI must run the browser tests, never skip them
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    _require_chromium()
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the tests' own ORM calls are
    # still synchronous, so Django's async-safety guard does not apply to them.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield instance
        instance.close()


# Chromium reports each refusal of the pages' Content-Security-Policy on the console ("Refused to
# ... because it violates the following Content Security Policy directive"); the page's own
# `securitypolicyviolation` event is reported there too, in case a refusal is not logged.
CSP = "Content Security Policy"
_REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => console.error(
  `Content Security Policy violation: ${event.violatedDirective} refused ${event.blockedURI || "inline code"}`));
"""


def watch_csp(tab: Page) -> list[str]:
    """The CSP violations `tab` reports from now on (its pages loaded later included)."""
    seen: list[str] = []
    tab.add_init_script(_REPORT_VIOLATIONS)
    tab.on("console", lambda message: seen.append(message.text) if CSP in message.text else None)
    return seen


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh tab at 1280 x 900; a test whose pages break their Content-Security-Policy fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    violations = watch_csp(tab)
    yield tab
    context.close()
    assert violations == [], f"the pages broke their Content-Security-Policy: {violations}"


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as test-results/screenshots/<name>.png and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
    page.screenshot(path=str(target), full_page=True)
    return target


def account_status(base: str, secret: str) -> int:
    """The status of GET /v1/account with `secret` on the server at `base` (does the key work?)."""
    request = urllib.request.Request(f"{base}/v1/account", headers={"Authorization": f"Bearer {secret}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)

"""The browser the UI tests use starts and renders a page the service serves."""

from __future__ import annotations

import pytest

from tests.browser import screenshot


@pytest.mark.django_db(transaction=True)
def test_chromium_renders_a_docs_page_from_the_live_server(live_server, page) -> None:
    page.goto(f"{live_server.url}/docs/")
    assert page.title()
    assert page.locator("body").inner_text().strip()
    assert screenshot(page, "smoke-docs").stat().st_size > 0

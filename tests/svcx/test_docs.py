"""A documentation page for every error code, and doc_url pointing at it."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.test import Client

from core.errors import CATALOGUE
from svcx.guides import inline_markdown


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_code_has_a_page(client: Client, code: str) -> None:
    response = client.get(f"/docs/errors/{code}")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode()
    assert code in text
    assert str(CATALOGUE[code].status) in text
    assert inline_markdown(CATALOGUE[code].help) in text
    assert "`" not in text  # code spans render as <code>, not as literal backticks


def test_every_docs_page_names_the_support_contact(client: Client, settings: object) -> None:
    settings.SVCX_SUPPORT_CONTACT = "https://acme.example/help"  # type: ignore[attr-defined]
    for path in ("/docs/", "/docs/quickstart", "/docs/errors/account_suspended"):
        text = client.get(path).content.decode()
        assert '<a href="https://acme.example/help">https://acme.example/help</a>' in text, path


def test_index_lists_every_code(client: Client) -> None:
    text = client.get("/docs/").content.decode()

    for code in CATALOGUE:
        assert f"/docs/errors/{code}" in text


def test_doc_url_of_an_error_resolves_to_its_page(client: Client, settings: object) -> None:
    settings.SVCX_DOCS_URL = "http://testserver/docs"  # type: ignore[attr-defined]
    doc_url = client.get("/v1/none").json()["error"]["doc_url"]

    page = client.get(urlsplit(doc_url).path)

    assert page.status_code == 200
    assert "unknown_endpoint" in page.content.decode()


def test_code_spans_of_the_catalogue_render_as_code_and_other_markup_is_escaped() -> None:
    assert inline_markdown("Send `pages` <b>now</b> & `x<y`.") == (
        "Send <code>pages</code> &lt;b&gt;now&lt;/b&gt; &amp; <code>x&lt;y</code>."
    )


def test_unknown_code_page_is_an_envelope(client: Client) -> None:
    response = client.get("/docs/errors/no_such_code")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_endpoint"


def test_the_favicon_is_served_and_named_by_the_pages(client: Client) -> None:
    response = client.get("/favicon.ico")

    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert '<link rel="icon" href="/favicon.ico">' in client.get("/docs/").content.decode()

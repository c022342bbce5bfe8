"""What the SDK sends for each way of naming a document, and how it reads each kind of answer.
Against a real HTTP server on 127.0.0.1 that answers what each test scripts."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from scripted_server import Canned, Scripted, Sleeps, conversion, markdown
from svcx_client import Client, ConfigurationError, Conversion, MarkdownConversion

PDF = b"%PDF-1.7 test body"
MARKDOWN = "<!-- page 1 -->\n\n# Title\n\nText.\n"


def test_a_path_is_sent_as_the_raw_pdf_with_options_in_the_query_and_the_password_in_utf8(
    server: Scripted, sleeps: Sleeps, tmp_path: Path
) -> None:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(PDF)
    server.answers = [conversion()]

    result = Client("k", base_url=server.url, sleep=sleeps).convert(
        pdf, pages="1-3", tables="html", password="pässwörd", metadata={"customer": "c-42"}, debug=False
    )

    seen = server.seen[0]
    assert (seen.method, seen.path, seen.body) == ("POST", "/v1/convert/raw", PDF)
    assert seen.query == {"pages": ["1-3"], "tables": ["html"], "debug": ["false"]}
    assert seen.headers["content-type"] == "application/pdf"
    assert seen.headers["accept"] == "application/json"
    assert seen.raw_headers["x-svcx-pdf-password"] == "pässwörd".encode()
    assert json.loads(seen.headers["x-svcx-metadata"]) == {"customer": "c-42"}
    assert isinstance(result, Conversion)
    assert result.raw["future_member"] == "ignored"


def test_a_stored_file_is_named_in_a_json_body(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [conversion()]

    Client("k", base_url=server.url, sleep=sleeps).convert(file_id="file_1", pages="2", password="pw")

    seen = server.seen[0]
    assert (seen.path, seen.headers["content-type"]) == ("/v1/convert", "application/json")
    assert json.loads(seen.body) == {"file_id": "file_1", "options": {"pages": "2"}, "password": "pw"}


def test_markdown_is_answered_as_text_with_the_billing_of_its_headers(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [markdown(MARKDOWN, replayed=True)]

    result = Client("k", base_url=server.url, sleep=sleeps).convert(io.BytesIO(PDF), format="md")

    assert server.seen[0].headers["accept"] == "text/markdown"
    assert isinstance(result, MarkdownConversion)
    assert (result.markdown, str(result)) == (MARKDOWN, MARKDOWN)
    assert (result.pages_billed, result.credits_billed, result.cached, result.result_truncated) == (1, 1, False, False)
    assert (result.request_id, result.answer.idempotent_replayed) == ("req_md", True)


def test_a_document_request_names_exactly_one_source_and_known_options(server: Scripted, sleeps: Sleeps) -> None:
    client = Client("k", base_url=server.url, sleep=sleeps)

    with pytest.raises(ConfigurationError):
        client.convert(PDF, file_id="file_1")
    with pytest.raises(ConfigurationError):
        client.inspect()
    with pytest.raises(ConfigurationError, match="page"):
        client.toc(PDF, page="1")  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="format"):
        client.convert(PDF, format="html")  # type: ignore[call-overload]

    assert server.seen == []


def test_no_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SVCX_API_KEY", "SVCX_KEY"):
        monkeypatch.delenv(name, raising=False)

    with pytest.raises(ConfigurationError, match="SVCX_API_KEY"):
        Client()


@pytest.mark.parametrize(("key_name", "url_name"), [("SVCX_API_KEY", "SVCX_BASE_URL"), ("SVCX_KEY", "SVCX_URL")])
def test_the_key_and_address_come_from_the_environment(
    server: Scripted, monkeypatch: pytest.MonkeyPatch, key_name: str, url_name: str
) -> None:
    for name in ("SVCX_API_KEY", "SVCX_BASE_URL", "SVCX_KEY", "SVCX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(key_name, "svcx_sk_live_env")
    monkeypatch.setenv(url_name, server.url + "/")
    server.answers = [Canned(body=b'{"object": "list", "data": [], "has_more": false}')]

    page = Client().usage_records(limit=5, start="2026-01-01")

    assert (page.data, page.has_more) == ([], False)
    seen = server.seen[0]
    assert (seen.path, seen.query) == ("/v1/usage/records", {"limit": ["5"], "start": ["2026-01-01"]})
    assert seen.headers["authorization"] == "Bearer svcx_sk_live_env"

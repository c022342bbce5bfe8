"""Large /v1 answers travel gzip-compressed when the client accepts it; nothing else changes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.conftest import WorkerProcess, text_pdf
from tests.factories import bearer, make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]

SENTENCE = "Every page of this document carries a long paragraph of ordinary prose for the result to hold. "


@pytest.fixture
def secret(session_worker: WorkerProcess) -> str:
    return make_key(make_org(credits=100)).secret


@pytest.fixture
def long_pdf(tmp_path: Path) -> Path:
    # Enough text that even the Markdown answer passes 8 KiB.
    return text_pdf(tmp_path / "long.pdf", [SENTENCE * 6 for _ in range(16)])


def _convert(client: Client, secret: str, pdf: Path, **headers: Any) -> Any:
    return client.post(
        "/v1/convert", data=pdf.read_bytes(), content_type="application/pdf", **bearer(secret), **headers
    )


def test_a_large_result_is_gzipped_for_a_client_that_accepts_it(client: Client, secret: str, long_pdf: Path) -> None:
    plain = _convert(client, secret, long_pdf)
    packed = _convert(client, secret, long_pdf, HTTP_ACCEPT_ENCODING="gzip, deflate")

    assert plain.status_code == packed.status_code == 200
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed["Vary"]
    assert int(packed["Content-Length"]) == len(packed.content) < len(plain.content) / 3
    body, reference = json.loads(gzip.decompress(packed.content)), plain.json()
    assert len(plain.content) > 8 * 1024
    # The same answer (the second one a cache hit, with its own request id).
    for answer in (body, reference):
        answer.pop("request_id")
        answer.pop("cached")
        answer.pop("pages_billed")
        answer.pop("credits_billed")
    assert body == reference
    assert packed["X-Request-Id"].startswith("req_")


def test_markdown_answers_are_gzipped_too(client: Client, secret: str, long_pdf: Path) -> None:
    plain = _convert(client, secret, long_pdf, HTTP_ACCEPT="text/markdown")
    packed = _convert(client, secret, long_pdf, HTTP_ACCEPT="text/markdown", HTTP_ACCEPT_ENCODING="gzip")

    assert len(plain.content) > 8 * 1024
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    assert packed["X-Svcx-Cached"] == "true"


def test_small_answers_and_pages_for_people_are_never_compressed(client: Client, secret: str) -> None:
    account = client.get("/v1/account", HTTP_ACCEPT_ENCODING="gzip", **bearer(secret))
    docs = client.get("/docs/", HTTP_ACCEPT_ENCODING="gzip")

    assert account.status_code == 200
    assert "Content-Encoding" not in account  # under 8 KiB: not worth it
    assert docs.status_code == 200
    assert len(docs.content) > 8 * 1024
    assert "Content-Encoding" not in docs  # a page for people, outside /v1

"""The embedded default (SQLite, the file-system broker, the file cache) through HTTP.

The rest of the suite runs on PostgreSQL and Redis; these tests start the launcher of `make run`
with neither, once for the module, and send it a representative set of requests, so that the
file-system branches of the cache, the meters, the idempotency store and the broker are run by
`make test` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pikepdf
import pytest

from tests.conftest import text_pdf
from tests.svcx.launcher import launched

KEYS = re.compile(r"live: (svcx_sk_live_\S+)\s+test: (svcx_sk_test_\S+)")


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("embedded")
    with launched(tmp, "embedded-") as run:
        keys = KEYS.search(run.output)
        assert keys, run.output[-3000:]
        document = text_pdf(tmp / "plain.pdf", ["Alpha on one.", "Beta on two.", "Gamma on three."])
        with pikepdf.open(document) as pdf:
            with pdf.open_outline() as outline:
                outline.root.extend(pikepdf.OutlineItem(f"Chapter {n}", n - 1) for n in (1, 2, 3))
            pdf.save(tmp / "document.pdf")
        yield {
            "base": run.base,
            "live": keys.group(1),
            "test": keys.group(2),
            "pdf": (tmp / "document.pdf").read_bytes(),
        }


def call(embedded: dict[str, Any], method: str, path: str, key: str = "live", **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {embedded[key]}", **kwargs.pop("headers", {})}
    return httpx.request(method, embedded["base"] + path, headers=headers, timeout=120, **kwargs)


def convert(embedded: dict[str, Any], query: str = "", key: str = "live", **headers: str) -> httpx.Response:
    return call(
        embedded,
        "POST",
        f"/v1/convert{query}",
        key,
        content=embedded["pdf"],
        headers={"Content-Type": "application/pdf", **headers},
    )


def test_a_conversion_bills_and_its_repeat_is_a_free_cache_hit(embedded: dict[str, Any]) -> None:
    first = convert(embedded, "?pages=2")
    again = convert(embedded, "?pages=2")

    assert first.status_code == again.status_code == 200
    assert "Beta on two." in first.json()["markdown"]
    assert (first.json()["cached"], first.json()["credits_billed"]) == (False, 1)
    assert (again.json()["cached"], again.json()["credits_billed"]) == (True, 0)
    assert again.json()["markdown"] == first.json()["markdown"]


def test_markdown_is_negotiated(embedded: dict[str, Any]) -> None:
    response = convert(embedded, "?pages=1-2", Accept="text/markdown")

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/markdown")
    assert response.text.startswith("<!-- page 1 -->\n")
    assert response.headers["X-Svcx-Pages-Billed"] in ("0", "2")


def test_an_idempotent_retry_is_replayed_and_a_changed_one_is_a_conflict(embedded: dict[str, Any]) -> None:
    first = convert(embedded, "?pages=3", **{"Idempotency-Key": "embedded-1"})
    replay = convert(embedded, "?pages=3", **{"Idempotency-Key": "embedded-1"})
    changed = convert(embedded, "?pages=1", **{"Idempotency-Key": "embedded-1"})

    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    assert (changed.status_code, changed.json()["error"]["code"]) == (409, "idempotency_conflict")


def test_the_request_meter_counts_down_in_the_file_cache(embedded: dict[str, Any]) -> None:
    first = call(embedded, "GET", "/v1/account")
    second = call(embedded, "GET", "/v1/account")

    assert first.status_code == second.status_code == 200
    remaining = int(first.headers["x-ratelimit-remaining-requests"])
    assert int(second.headers["x-ratelimit-remaining-requests"]) == remaining - 1


def test_a_test_key_converts_for_nothing(embedded: dict[str, Any]) -> None:
    body = convert(embedded, "?pages=1", key="test").json()

    assert (body["pages_billed"], body["credits_billed"]) == (1, 0)


def test_inspect_and_toc_run_on_the_worker(embedded: dict[str, Any]) -> None:
    inspection = call(
        embedded, "POST", "/v1/inspect", content=embedded["pdf"], headers={"Content-Type": "application/pdf"}
    ).json()
    toc = call(embedded, "POST", "/v1/toc", content=embedded["pdf"], headers={"Content-Type": "application/pdf"}).json()

    assert (inspection["object"], inspection["page_count"]) == ("inspection", 3)
    assert "Alpha on one." in inspection["pages"][0]["sample"]
    assert [(e["page"], e["title"]) for e in toc["entries"]] == [(1, "Chapter 1"), (2, "Chapter 2"), (3, "Chapter 3")]


def test_a_stored_file_converts_by_id_and_is_deleted(embedded: dict[str, Any]) -> None:
    stored = call(embedded, "POST", "/v1/files", files={"file": ("document.pdf", embedded["pdf"])})
    assert stored.status_code == 201
    file_id = stored.json()["id"]

    result = call(embedded, "POST", "/v1/convert", json={"file_id": file_id, "options": {"pages": "1"}})
    deleted = call(embedded, "DELETE", f"/v1/files/{file_id}")
    gone = call(embedded, "GET", f"/v1/files/{file_id}")

    assert "Alpha on one." in result.json()["markdown"]
    assert deleted.json()["deleted"] is True
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "file_not_found")


def test_errors_are_the_envelope(embedded: dict[str, Any]) -> None:
    anonymous = httpx.get(embedded["base"] + "/v1/account", timeout=30)
    wrong_type = call(embedded, "POST", "/v1/convert", content=b"%PDF", headers={"Content-Type": "text/plain"})

    assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "missing_api_key")
    assert (wrong_type.status_code, wrong_type.json()["error"]["code"]) == (415, "unsupported_content_type")

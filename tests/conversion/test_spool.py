"""Nothing an upload leaves on disk outlives its request (issue 23, item 1): every refusal of
every encoding, on every endpoint that takes a document, leaves the spool directory as it found
it; and what a dead process left behind is swept."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from conversion.spool import SpoolUsage, spool_sweep, spool_usage
from tests.factories import bearer, make_key, make_org

pytestmark = [pytest.mark.django_db]
PDF_BYTES = b"%PDF-1.4\n%fake but never opened\n"
DOCUMENT_PATHS = ["/v1/convert", "/v1/inspect", "/v1/toc"]


@pytest.fixture
def spool(settings: Any, tmp_path: Path) -> Path:
    directory = tmp_path / "spool"
    directory.mkdir()
    settings.SVCX_SPOOL_DIR = directory
    settings.FILE_UPLOAD_TEMP_DIR = str(directory)  # Django's multipart parts go there too
    return directory


@pytest.fixture
def secret() -> str:
    return make_key(make_org(credits=100)).secret


def _pdf_part(tmp_path: Path, name: str = "doc.pdf") -> Any:
    path = tmp_path / name
    path.write_bytes(PDF_BYTES * 2000)  # 66 KB: a part Django writes to a temporary file
    return path.open("rb")


def _left(spool: Path) -> list[str]:
    return sorted(p.name for p in spool.rglob("*") if p.is_file())


MULTIPART_REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("options_not_json", {"options": "{not json"}, "malformed_json"),
    ("metadata_not_json", {"metadata": "[1,"}, "malformed_json"),
    ("options_bad_value", {"options": json.dumps({"tables": "sideways"})}, "unsupported_option_value"),
    ("unknown_part", {"colour": "blue"}, "unknown_parameter"),
    ("second_source", {"file_id": "file_123"}, "multiple_sources"),
    ("url_source", {"url": "https://example.com/a.pdf"}, "multiple_sources"),
    ("options_surrogate", {"options": '{"pages": "\\ud800"}'}, "malformed_json"),
]


# (endpoint, case): metadata is a member of convert only
MULTIPART_CASES = [
    pytest.param(path, parts, code, id=f"{path}-{case}")
    for path in DOCUMENT_PATHS
    for case, parts, code in MULTIPART_REFUSALS
    if path == "/v1/convert" or case != "metadata_not_json"
]


@pytest.mark.parametrize(("path", "parts", "code"), MULTIPART_CASES)
def test_a_refused_multipart_upload_leaves_nothing_in_the_spool(
    client: Client, secret: str, spool: Path, tmp_path: Path, path: str, parts: dict[str, Any], code: str
) -> None:
    response = client.post(path, {"file": _pdf_part(tmp_path), **parts}, **bearer(secret))

    assert response.status_code in (400, 422), response.content
    if path == "/v1/convert" or response.json()["error"]["code"] != "unknown_parameter":
        assert response.json()["error"]["code"] in (code, "unknown_parameter")
    assert _left(spool) == []


def test_two_file_parts_leave_nothing_in_the_spool(client: Client, secret: str, spool: Path, tmp_path: Path) -> None:
    response = client.post(
        "/v1/convert", {"file": [_pdf_part(tmp_path, "a.pdf"), _pdf_part(tmp_path, "b.pdf")]}, **bearer(secret)
    )

    assert response.json()["error"]["code"] == "multiple_sources"
    assert _left(spool) == []


def test_a_refused_file_upload_leaves_nothing_in_the_spool(
    client: Client, secret: str, spool: Path, tmp_path: Path
) -> None:
    response = client.post("/v1/files", {"file": _pdf_part(tmp_path), "purpose": "x"}, **bearer(secret))

    assert response.status_code == 400
    assert _left(spool) == []


@pytest.mark.parametrize(
    ("query", "headers", "code"),
    [
        ("?colour=blue", {}, "unknown_parameter"),
        ("?pages=1&pages=2", {}, "invalid_parameter_type"),
        ("?tables=sideways", {}, "unsupported_option_value"),
        ("", {"HTTP_X_SVCX_METADATA": "[1,"}, "malformed_json"),
    ],
)
def test_a_refused_raw_upload_leaves_nothing_in_the_spool(
    client: Client, secret: str, spool: Path, query: str, headers: dict[str, str], code: str
) -> None:
    response = client.post(
        "/v1/convert" + query, data=PDF_BYTES * 2000, content_type="application/pdf", **bearer(secret), **headers
    )

    assert response.json()["error"]["code"] == code
    assert _left(spool) == []


def test_a_refused_json_body_leaves_nothing_in_the_spool(client: Client, secret: str, spool: Path) -> None:
    response = client.post("/v1/convert", data=b'{"file_id": ', content_type="application/json", **bearer(secret))

    assert response.json()["error"]["code"] == "malformed_json"
    assert _left(spool) == []


def test_the_sweep_deletes_spooled_files_older_than_the_spool_age_only(spool: Path, settings: Any) -> None:
    old, fresh = spool / "body-old", spool / "fetched-fresh.pdf"
    old.write_bytes(b"x" * 1000)
    fresh.write_bytes(b"y" * 10)
    then = time.time() - settings.SVCX_SPOOL_MAX_AGE - 60
    os.utime(old, (then, then))

    before = spool_usage()
    swept = spool_sweep()

    assert (before.files, before.bytes) == (2, 1010)
    assert (swept.files, swept.bytes) == (1, 1000)
    assert _left(spool) == ["fetched-fresh.pdf"]
    assert spool_usage() == SpoolUsage(files=1, bytes=10)

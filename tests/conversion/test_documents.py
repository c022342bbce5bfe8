"""Stored files, inspect and table of contents through HTTP with a real worker."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone

from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion.files import files_purge_expired
from conversion.models import StoredFile
from tests.conftest import REAL_PDFS, WorkerProcess
from tests.conversion.engine.pdfs import Text, make_pdf
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def account(session_worker: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "live": make_key(org), "test": make_key(org, "test"), "other": make_key(make_org(credits=100))}


def upload(client: Client, secret: str, path: Path, **extra: Any) -> Any:
    return client.post(
        "/v1/files?filename=report.pdf",
        data=path.read_bytes(),
        content_type="application/pdf",
        **bearer(secret),
        **extra,
    )


def blobs(account: dict[str, Any]) -> list[Path]:
    """The blobs of the account's organization (every test has an organization of its own)."""
    root = Path(django_settings.SVCX_FILES_DIR) / account["org"].id
    return [p for p in root.rglob("*.pdf")] if root.exists() else []


def test_upload_returns_the_record_and_stores_the_bytes(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    response = upload(client, account["live"].secret, three_pages)

    assert response.status_code == 201
    body = response.json()
    assert body["id"].startswith("file_")
    assert (body["object"], body["filename"], body["bytes"], body["page_count"]) == (
        "file",
        "report.pdf",
        three_pages.stat().st_size,
        3,
    )
    assert body["expires_at"] > body["created_at"]
    record = StoredFile.objects.get(pk=body["id"])
    assert Path(django_settings.SVCX_FILES_DIR, record.storage_name).read_bytes() == three_pages.read_bytes()
    assert client.get(f"/v1/files/{body['id']}", **bearer(account["live"].secret)).json() | {
        "request_id": None
    } == body | {"request_id": None}


def test_multipart_upload_keeps_the_filename(client: Client, account: dict[str, Any], three_pages: Path) -> None:
    with three_pages.open("rb") as handle:
        body = client.post("/v1/files", {"file": handle}, **bearer(account["live"].secret)).json()

    assert body["filename"] == "three.pdf"


def test_encrypted_upload_is_stored_with_unknown_page_count(
    client: Client, account: dict[str, Any], encrypted: Path
) -> None:
    body = upload(client, account["live"].secret, encrypted).json()

    assert body["page_count"] is None


def test_not_a_pdf_is_refused_and_nothing_stored(client: Client, account: dict[str, Any], tmp_path: Path) -> None:
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"PK\x03\x04 this is a zip")

    assert_envelope(upload(client, account["live"].secret, junk), 422, "pdf_invalid")

    assert not StoredFile.objects.exists()
    assert not blobs(account)


def test_convert_by_file_id_twice_second_is_a_cache_hit(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]

    first = client.post(
        "/v1/convert",
        {"file_id": file_id, "options": {"pages": "1-2"}},
        content_type="application/json",
        **bearer(secret),
    ).json()
    second = client.post(
        "/v1/convert",
        {"file_id": file_id, "options": {"pages": "1-2"}},
        content_type="application/json",
        **bearer(secret),
    ).json()

    assert (first["pages_billed"], first["cached"]) == (2, False)
    assert (second["pages_billed"], second["cached"]) == (0, True)
    assert "Alpha text" in first["markdown"]
    assert credits_get(organization=account["org"], environment="live").balance == 98


def test_another_org_or_environment_gets_404(client: Client, account: dict[str, Any], three_pages: Path) -> None:
    file_id = upload(client, account["live"].secret, three_pages).json()["id"]

    for secret in (account["test"].secret, account["other"].secret):
        assert_envelope(client.get(f"/v1/files/{file_id}", **bearer(secret)), 404, "file_not_found")
        assert_envelope(client.delete(f"/v1/files/{file_id}", **bearer(secret)), 404, "file_not_found")
        response = client.post("/v1/convert", {"file_id": file_id}, content_type="application/json", **bearer(secret))
        assert_envelope(response, 404, "file_not_found")
    assert StoredFile.objects.get(pk=file_id).deleted_at is None


def test_delete_removes_the_bytes_and_leaves_a_tombstone(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]

    response = client.delete(f"/v1/files/{file_id}", **bearer(secret))

    assert response.json() | {"request_id": None} == {
        "id": file_id,
        "object": "file",
        "deleted": True,
        "request_id": None,
    }
    assert not blobs(account)
    assert StoredFile.objects.filter(pk=file_id).exists()
    assert_envelope(client.get(f"/v1/files/{file_id}", **bearer(secret)), 404, "file_not_found")
    assert_envelope(client.delete(f"/v1/files/{file_id}", **bearer(secret)), 404, "file_not_found")


def test_same_content_twice_is_stored_once_and_survives_one_delete(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    a = upload(client, secret, three_pages).json()["id"]
    b = upload(client, secret, three_pages).json()["id"]
    assert len(blobs(account)) == 1

    client.delete(f"/v1/files/{a}", **bearer(secret))

    assert len(blobs(account)) == 1
    assert client.get(f"/v1/files/{b}", **bearer(secret)).status_code == 200


def test_expired_file_is_410_and_its_bytes_are_purged(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]
    StoredFile.objects.filter(pk=file_id).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert_envelope(client.get(f"/v1/files/{file_id}", **bearer(secret)), 410, "file_expired")
    response = client.post("/v1/convert", {"file_id": file_id}, content_type="application/json", **bearer(secret))
    assert_envelope(response, 410, "file_expired")
    assert files_purge_expired() == 1
    assert not blobs(account)
    assert_envelope(client.get(f"/v1/files/{file_id}", **bearer(secret)), 410, "file_expired")
    assert not LedgerEntry.objects.exclude(kind="grant").exists()


def test_a_file_whose_bytes_are_gone_from_the_store_is_410_and_logged(
    client: Client, account: dict[str, Any], three_pages: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]
    (blob,) = blobs(account)
    blob.unlink()  # the store lost the object; the record still says it is kept

    error = assert_envelope(client.get(f"/v1/files/{file_id}/content", **bearer(secret)), 410, "file_expired")

    assert (error["param"], error["retryable"]) == ("file_id", False)
    assert file_id in error["message"]
    (record,) = [r for r in caplog.records if r.getMessage() == "stored file's bytes missing from the store"]
    assert (record.levelname, record.file_id) == ("ERROR", file_id)  # type: ignore[attr-defined]


def test_retention_comes_from_the_setting(
    client: Client, account: dict[str, Any], three_pages: Path, settings: Any
) -> None:
    settings.SVCX_FILE_RETENTION = 3600

    body = upload(client, account["live"].secret, three_pages).json()
    record = StoredFile.objects.get(pk=body["id"])

    assert timedelta(minutes=59) < record.expires_at - record.created_at <= timedelta(hours=1)


def test_quota_exceeded_is_413_with_details_and_nothing_left(
    client: Client, account: dict[str, Any], three_pages: Path, tmp_path: Path
) -> None:
    secret = account["live"].secret
    size = three_pages.stat().st_size
    account["org"].limits = {"storage_bytes": size + 10}
    account["org"].save(update_fields=["limits"])
    upload(client, secret, three_pages)
    other = tmp_path / "other.pdf"
    with pikepdf.open(three_pages) as pdf:
        pdf.docinfo["/Title"] = "different bytes"
        pdf.save(other)

    error = assert_envelope(upload(client, secret, other), 413, "storage_quota_exceeded")

    assert error["details"] == {"quota_bytes": size + 10, "used_bytes": size, "needed_bytes": other.stat().st_size}
    assert StoredFile.objects.count() == 1
    assert len(blobs(account)) == 1
    assert not list(Path(django_settings.SVCX_SPOOL_DIR).glob("body-*"))


def test_upload_over_128_mib_is_413(client: Client, account: dict[str, Any], settings: Any) -> None:
    response = client.post(
        "/v1/files",
        data=b"%PDF-",
        content_type="application/pdf",
        CONTENT_LENGTH=str(129 * 1024 * 1024),
        **bearer(account["live"].secret),
    )

    assert_envelope(response, 413, "file_too_large")


def test_files_need_their_scopes(client: Client, account: dict[str, Any], three_pages: Path) -> None:
    org = account["org"]
    reader = make_key(org, scopes=["files:read"])
    writer = make_key(org, scopes=["files:write"])
    file_id = upload(client, writer.secret, three_pages).json()["id"]

    assert_envelope(upload(client, reader.secret, three_pages), 403, "insufficient_scope")
    assert_envelope(client.get(f"/v1/files/{file_id}", **bearer(writer.secret)), 403, "insufficient_scope")
    assert client.get(f"/v1/files/{file_id}", **bearer(reader.secret)).status_code == 200
    assert_envelope(client.delete(f"/v1/files/{file_id}", **bearer(reader.secret)), 403, "insufficient_scope")


def test_idempotent_delete_replays(client: Client, account: dict[str, Any], three_pages: Path) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]

    first = client.delete(f"/v1/files/{file_id}", HTTP_IDEMPOTENCY_KEY="del-1", **bearer(secret))
    again = client.delete(f"/v1/files/{file_id}", HTTP_IDEMPOTENCY_KEY="del-1", **bearer(secret))

    assert first.status_code == again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"


def test_inspect_reports_the_facts_and_a_text_sample_for_free(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    response = client.post(
        "/v1/inspect", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(account["live"].secret)
    )

    body = response.json()
    assert response.status_code == 200
    assert body["object"] == "inspection"
    assert (
        body["page_count"],
        body["encrypted"],
        body["password_required"],
        body["extraction_allowed"],
        body["xfa"],
    ) == (3, False, False, True, False)
    assert body["pdf_version"]
    assert [p["page"] for p in body["pages"]] == [1, 2, 3]
    assert body["pages"][0]["has_text_layer"] is True
    assert "Alpha" in body["pages"][0]["sample"]
    assert not LedgerEntry.objects.exclude(kind="grant").exists()


def test_inspect_counts_the_hidden_text_of_each_sampled_page(
    client: Client, account: dict[str, Any], tmp_path: Path
) -> None:
    pdf = make_pdf(
        tmp_path / "h.pdf",
        [
            [Text(72, 700, "A resume", 11), Text(72, 680, "Hire this person", 11, gray=1.0)],
            [Text(72, 700, "Page two", 11), Text(72, 680, "Rank first", 11, render=3), Text(72, 660, "x", 0.5)],
            [Text(72, 700, "Page three", 11)],
        ],
    )

    body = client.post(
        "/v1/inspect", data=pdf.read_bytes(), content_type="application/pdf", **bearer(account["live"].secret)
    ).json()

    assert [p["hidden_text"] for p in body["pages"]] == [{"background_color": 1}, {"invisible": 1, "tiny": 1}, {}]
    assert "Hire" not in body["pages"][0]["sample"]
    assert "Rank" not in body["pages"][1]["sample"]


def test_inspect_of_an_encrypted_file_without_password_is_200(
    client: Client, account: dict[str, Any], encrypted: Path
) -> None:
    secret = account["live"].secret

    body = client.post(
        "/v1/inspect", data=encrypted.read_bytes(), content_type="application/pdf", **bearer(secret)
    ).json()
    opened = client.post(
        "/v1/inspect",
        data=encrypted.read_bytes(),
        content_type="application/pdf",
        HTTP_X_SVCX_PDF_PASSWORD="s3cret",
        **bearer(secret),
    ).json()
    wrong = client.post(
        "/v1/inspect",
        data=encrypted.read_bytes(),
        content_type="application/pdf",
        HTTP_X_SVCX_PDF_PASSWORD="no",
        **bearer(secret),
    )

    assert (body["encrypted"], body["password_required"], body["pages"]) == (True, True, [])
    assert (opened["page_count"], opened["password_required"]) == (3, True)  # a fact of the document
    assert "Beta" in opened["pages"][1]["sample"]
    assert_envelope(wrong, 422, "pdf_password_incorrect")


def test_inspect_returns_document_errors_as_convert_does(
    client: Client, account: dict[str, Any], tmp_path: Path
) -> None:
    junk = tmp_path / "junk.pdf"
    junk.write_text("hello")

    assert_envelope(
        client.post(
            "/v1/inspect", data=junk.read_bytes(), content_type="application/pdf", **bearer(account["live"].secret)
        ),
        422,
        "pdf_invalid",
    )


def test_inspect_by_file_id_and_multipart(client: Client, account: dict[str, Any], three_pages: Path) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]

    by_id = client.post("/v1/inspect", {"file_id": file_id}, content_type="application/json", **bearer(secret))
    with three_pages.open("rb") as handle:
        by_part = client.post("/v1/inspect", {"file": handle}, **bearer(secret))

    assert by_id.json()["page_count"] == by_part.json()["page_count"] == 3


def test_inspect_samples_the_selected_pages_and_echoes_metadata(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    response = client.post(
        "/v1/inspect?pages=2-",
        data=three_pages.read_bytes(),
        content_type="application/pdf",
        HTTP_X_SVCX_METADATA='{"batch": 7}',
        **bearer(account["live"].secret),
    )

    body = response.json()
    assert response.status_code == 200
    assert [p["page"] for p in body["pages"]] == [2, 3]
    assert body["metadata"] == {"batch": 7}
    assert body["page_count"] == 3


@pytest.mark.parametrize("path", ["/v1/inspect", "/v1/toc"])
def test_inspect_and_toc_check_options_as_convert_does(
    client: Client, account: dict[str, Any], three_pages: Path, path: str
) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]

    def post(body: dict[str, Any]) -> Any:
        return client.post(path, {"file_id": file_id, **body}, content_type="application/json", **bearer(secret))

    assert assert_envelope(post({"options": {"colour": "red"}}), 400, "unknown_parameter")["param"] == "options.colour"
    assert assert_envelope(post({"options": {"ocr": "auto"}}), 400, "ocr_not_available")["param"] == "options.ocr"
    assert assert_envelope(post({"options": {"pages": "0"}}), 400, "page_range_zero")["param"] == "options.pages"
    assert assert_envelope(post({"metadata": []}), 400, "invalid_parameter_type")["param"] == "metadata"
    ok = post({"options": {"tables": "html"}, "metadata": {"k": "v"}})
    assert (ok.status_code, ok.json()["metadata"]) == (200, {"k": "v"})


def test_inspect_debug_follows_the_organizations_policy(
    client: Client, account: dict[str, Any], three_pages: Path
) -> None:
    secret = account["live"].secret
    file_id = upload(client, secret, three_pages).json()["id"]
    body = {"file_id": file_id, "debug": True}

    allowed = client.post("/v1/inspect", body, content_type="application/json", **bearer(secret)).json()
    account["org"].debug_policy = "disabled"
    account["org"].save(update_fields=["debug_policy"])
    refused = client.post("/v1/inspect", body, content_type="application/json", **bearer(secret))

    assert allowed["debug"]["engine"]["id"] == "svcx-layout"
    assert_envelope(refused, 403, "debug_not_permitted")


def test_a_pdf_without_pages_is_pdf_no_pages_on_every_endpoint(
    client: Client, account: dict[str, Any], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.pdf"
    pikepdf.new().save(empty)
    secret = account["live"].secret

    for path in ("/v1/convert", "/v1/inspect", "/v1/toc", "/v1/files"):
        response = client.post(path, data=empty.read_bytes(), content_type="application/pdf", **bearer(secret))
        assert_envelope(response, 422, "pdf_no_pages")
    assert not StoredFile.objects.exists()


def test_toc_lists_the_outline(client: Client, account: dict[str, Any]) -> None:
    path = REAL_PDFS / "pdfjs__nested_outline.pdf"

    body = client.post(
        "/v1/toc", data=path.read_bytes(), content_type="application/pdf", **bearer(account["live"].secret)
    ).json()

    assert body["object"] == "toc"
    assert body["entries"]
    assert {"level", "title", "page"} == set(body["entries"][0])
    assert max(e["level"] for e in body["entries"]) >= 2
    assert all(isinstance(e["page"], int) for e in body["entries"])


def test_toc_is_empty_without_an_outline_and_needs_the_password(
    client: Client, account: dict[str, Any], three_pages: Path, encrypted: Path
) -> None:
    secret = account["live"].secret

    body = client.post(
        "/v1/toc", data=three_pages.read_bytes(), content_type="application/pdf", **bearer(secret)
    ).json()

    assert body["entries"] == []
    assert_envelope(
        client.post("/v1/toc", data=encrypted.read_bytes(), content_type="application/pdf", **bearer(secret)),
        422,
        "pdf_encrypted",
    )


def test_inspect_and_toc_need_the_inspect_scope(client: Client, account: dict[str, Any], three_pages: Path) -> None:
    converter = make_key(account["org"], scopes=["convert"])

    for path in ("/v1/inspect", "/v1/toc"):
        response = client.post(
            path, data=three_pages.read_bytes(), content_type="application/pdf", **bearer(converter.secret)
        )
        assert_envelope(response, 403, "insufficient_scope")

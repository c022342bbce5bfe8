"""Every real-world PDF of the shared corpus through POST /v1/convert: a 200 or the right
document error in the envelope, never a 5xx."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from billing.models import CreditHold
from tests.conftest import CORPUS, CORPUS_ABSENT, WorkerProcess
from tests.factories import bearer, make_key, make_org

MANIFEST = CORPUS / "manifest.json"
RECORDS = json.loads(MANIFEST.read_text())["files"] if MANIFEST.exists() else []
# What a client may see for a file of each category (status, code or None for success).
ALLOWED = {
    "not_pdf": {(422, "pdf_invalid")},
    "zero_pages": {(422, "pdf_no_pages")},
    "corrupt_unrecoverable": {
        (422, "pdf_corrupt"),
        (422, "pdf_read_error"),
        (422, "pdf_parse_failed"),
        (422, "pdf_invalid"),
    },
    "no_text_layer": {(422, "document_has_no_text_layer"), (200, None)},
    "encrypted_owner_restricted": {(403, "pdf_extraction_not_permitted"), (200, None)},
    "xfa": {(422, "pdf_is_xfa"), (200, None), (403, "pdf_extraction_not_permitted")},
}
DOCUMENT_ERRORS = {
    (422, c)
    for c in (
        "pdf_corrupt",
        "pdf_read_error",
        "pdf_parse_failed",
        "document_too_complex",
        "pdf_too_complex",
        "document_has_no_text_layer",
    )
}


@pytest.mark.skipif(not RECORDS, reason=CORPUS_ABSENT)
@pytest.mark.django_db(transaction=True)
def test_every_corpus_file_gets_a_result_or_its_document_error(client: Client, session_worker: WorkerProcess) -> None:
    minted = make_key(make_org(credits=100_000))
    problems: list[str] = []
    for record in RECORDS:
        path = CORPUS / "files" / record["file"]
        headers: dict[str, Any] = {}
        if record["category"] == "encrypted_user" and record.get("password"):
            headers["HTTP_X_SVCX_PDF_PASSWORD"] = record["password"]
        response = client.post(
            "/v1/convert?pages=1-10",
            data=path.read_bytes(),
            content_type="application/pdf",
            **bearer(minted.secret),
            **headers,
        )
        body = response.json()
        outcome = (response.status_code, body.get("error", {}).get("code"))
        category = record["category"]
        if category in ALLOWED:
            allowed = ALLOWED[category]
        elif category == "encrypted_user":
            if record.get("password"):  # opened with it, then judged like any document
                allowed = {(200, None), (403, "pdf_extraction_not_permitted"), (422, "document_has_no_text_layer")}
            else:
                allowed = {(422, "pdf_encrypted"), (422, "pdf_unsupported_security")}
        else:  # text, tables, forms, long, multicolumn, cjk, corrupt_recoverable, complex
            allowed = (
                {(200, None)} | DOCUMENT_ERRORS if category in ("complex", "corrupt_recoverable") else {(200, None)}
            )
        if outcome not in allowed:
            problems.append(f"{record['file']} ({category}): {outcome} {body.get('error', {}).get('message', '')[:80]}")
        if response.status_code == 200:
            assert body["document"]["sha256"] == record["sha256"]
            assert body["pages_billed"] == len(body["pages"])
        else:
            assert set(body["error"]) >= {"type", "code", "message", "request_id"}

    assert not problems, "\n".join(problems)
    assert not CreditHold.objects.filter(status="held").exists()


@pytest.mark.skipif(not RECORDS, reason=CORPUS_ABSENT)
@pytest.mark.django_db(transaction=True)
def test_every_corpus_file_is_inspected_and_its_outline_read_without_a_server_error(
    client: Client, settings: Any, session_worker: WorkerProcess
) -> None:
    # Some files take the worker many seconds in one engine call (pdfjs__bug1978317: ~20 s to
    # sample three pages). The worker beats every second (test workers), so a web side that calls
    # a worker lost after 3 s of silence must still get every answer.
    settings.SVCX_WORKER_LOST_AFTER = 3
    org = make_org()
    org.limits = {"inspect": 1000, "toc": 1000, "inspect_sample_pages": 10_000}
    org.save(update_fields=["limits"])
    minted = make_key(org)
    problems: list[str] = []
    for record in RECORDS:
        data = (CORPUS / "files" / record["file"]).read_bytes()
        for path in ("/v1/inspect", "/v1/toc"):
            response = client.post(path, data=data, content_type="application/pdf", **bearer(minted.secret))
            body = response.json()
            if response.status_code >= 500 or (
                response.status_code != 200 and body["error"]["type"] != "document_error"
            ):
                problems.append(f"{path} {record['file']}: {response.status_code} {body.get('error', {}).get('code')}")
            if (
                path == "/v1/inspect"
                and response.status_code == 200
                and record["pages"] is not None
                and record["category"] != "encrypted_user"
            ) and body["page_count"] != record["pages"]:
                problems.append(f"inspect {record['file']}: page_count {body['page_count']} != {record['pages']}")
            if (
                path == "/v1/toc"
                and response.status_code == 200
                and record.get("outline_items")
                and not body["entries"]
            ):
                problems.append(f"toc {record['file']}: no entries, manifest has {record['outline_items']}")

    assert not problems, "\n".join(problems)

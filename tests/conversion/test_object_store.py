"""Web and workers share nothing but PostgreSQL, Redis and an S3 store: a real gunicorn and a real
Celery worker, each with a var directory of its own, against moto's S3 server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from conversion.files import files_purge_expired
from conversion.maintenance import job_inputs_sweep
from conversion.models import ConversionJob, StoredFile
from tests.conftest import S3Server, start_s3, start_web, start_worker, text_pdf
from tests.factories import make_key, make_org

pytestmark = [pytest.mark.django_db(transaction=True)]


@dataclass
class Stack:
    base: str
    s3: S3Server
    web_var: Path
    worker_var: Path


@pytest.fixture(scope="module")
def stack(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """moto, then a worker and a web process on queues of their own, each with its own SVCX_VAR_DIR:
    nothing can pass from one to the other through a disk."""
    root = tmp_path_factory.mktemp("object-store")
    s3 = start_s3(root)
    prefix = f"s3-{uuid.uuid4().hex[:8]}-"
    web_var, worker_var = root / "web-var", root / "worker-var"
    (root / "worker").mkdir()
    (root / "web").mkdir()
    with django_db_blocker.unblock():
        worker = start_worker(
            root / "worker",
            queues=f"{prefix}convert,{prefix}convert_test",
            env={**s3.env(), "SVCX_VAR_DIR": str(worker_var), "SVCX_QUEUE_PREFIX": prefix},
        )
    process, base = start_web(root / "web", env={**s3.env(), "SVCX_VAR_DIR": str(web_var), "SVCX_QUEUE_PREFIX": prefix})
    yield Stack(base=base, s3=s3, web_var=web_var, worker_var=worker_var)
    process.terminate()
    process.wait(timeout=20)
    worker.stop()
    s3.stop()


def s3_storage(stack: Stack, location: str) -> dict[str, Any]:
    """The STORAGES entry of this process for an alias in the stack's bucket."""
    options = {"bucket_name": stack.s3.bucket, "endpoint_url": stack.s3.endpoint, "location": location}
    credentials = {"access_key": "test", "secret_key": "test", "region_name": "us-east-1"}
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {**options, **credentials, "addressing_style": "path"},
    }


def call(stack: Stack, method: str, path: str, secret: str, body: bytes = b"", **headers: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        stack.base + path, data=body or None, method=method, headers={"Authorization": f"Bearer {secret}", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    return status, json.loads(raw) if raw else None


def multipart(pdf: bytes, **fields: str) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="doc.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n".encode()
        + pdf
        + b"\r\n"
    ]
    parts += [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def no_pdf_on_disk(stack: Stack) -> None:
    """Neither process kept a PDF in its var directory: the bytes went through the bucket."""
    for var in (stack.web_var, stack.worker_var):
        assert not [p for p in var.rglob("*") if p.is_file() and p.read_bytes()[:5] == b"%PDF-"], var


@pytest.fixture
def pdf(tmp_path: Path) -> bytes:
    return text_pdf(tmp_path / "doc.pdf", ["Alpha in the bucket.", "Beta in the bucket."]).read_bytes()


def test_each_encoding_converts_through_the_store_and_the_job_upload_is_deleted(stack: Stack, pdf: bytes) -> None:
    org = make_org(credits=100)
    secret = make_key(org).secret

    raw_status, raw_body = call(
        stack, "POST", "/v1/convert?pages=1", secret, pdf, **{"Content-Type": "application/pdf"}
    )
    form, form_type = multipart(pdf, options='{"pages": "2"}')
    form_status, form_body = call(stack, "POST", "/v1/convert", secret, form, **{"Content-Type": form_type})
    stored_status, stored = call(stack, "POST", "/v1/files", secret, pdf, **{"Content-Type": "application/pdf"})
    json_status, json_body = call(
        stack,
        "POST",
        "/v1/convert",
        secret,
        json.dumps({"file_id": stored["id"], "options": {"pages": "1-2", "tables": "html"}}).encode(),
        **{"Content-Type": "application/json"},
    )

    assert (raw_status, form_status, stored_status, json_status) == (200, 200, 201, 200)
    assert "Alpha in the bucket." in raw_body["pages"][0]["markdown"]
    assert "Beta in the bucket." in form_body["pages"][0]["markdown"]
    assert [p["page"] for p in json_body["pages"]] == [1, 2]
    jobs = {job.kind: job for job in ConversionJob.objects.filter(status="succeeded")}
    assert ConversionJob.objects.filter(kind="convert", source_store="jobs").count() == 2
    assert (jobs["file"].source_store, jobs["file"].source_key) == ("jobs", f"{jobs['file'].request_id}.pdf")
    by_id = ConversionJob.objects.get(kind="convert", source_store="files")
    assert by_id.source_key == StoredFile.objects.get(pk=stored["id"]).storage_name
    assert stack.s3.keys("jobs/") == []  # every job's upload was deleted when the job ended
    assert stack.s3.keys(f"files/{org.id}/") == [f"files/{by_id.source_key}"]
    no_pdf_on_disk(stack)


def test_a_stored_file_is_an_object_and_delete_removes_it(stack: Stack, pdf: bytes) -> None:
    secret = make_key(make_org(credits=100)).secret

    status, stored = call(stack, "POST", "/v1/files", secret, pdf, **{"Content-Type": "application/pdf"})
    key = "files/" + StoredFile.objects.get(pk=stored["id"]).storage_name
    in_bucket = stack.s3.read(key)
    deleted, _ = call(stack, "DELETE", f"/v1/files/{stored['id']}", secret)
    after, gone = call(
        stack,
        "POST",
        "/v1/convert",
        secret,
        json.dumps({"file_id": stored["id"]}).encode(),
        **{"Content-Type": "application/json"},
    )

    assert (status, in_bucket) == (201, pdf)
    assert deleted == 200
    assert key not in stack.s3.keys("files/")
    assert (after, gone["error"]["code"]) == (404, "file_not_found")
    no_pdf_on_disk(stack)


def test_an_expired_file_is_purged_from_the_bucket(stack: Stack, pdf: bytes, settings: Any) -> None:
    org = make_org(credits=100)
    secret = make_key(org).secret
    status, stored = call(stack, "POST", "/v1/files", secret, pdf, **{"Content-Type": "application/pdf"})
    record = StoredFile.objects.get(pk=stored["id"])
    StoredFile.objects.filter(pk=record.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    settings.STORAGES = {
        **settings.STORAGES,
        "files": s3_storage(stack, "files"),
    }
    assert stack.s3.keys(f"files/{org.id}/") == [f"files/{record.storage_name}"]

    purged = files_purge_expired()
    expired, body = call(stack, "GET", f"/v1/files/{stored['id']}", secret)

    assert (status, purged) == (201, 1)
    assert stack.s3.keys(f"files/{org.id}/") == []
    assert (expired, body["error"]["code"]) == (410, "file_expired")


def test_the_sweep_deletes_job_uploads_left_in_the_bucket_but_not_a_running_job_s(stack: Stack, settings: Any) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "jobs": s3_storage(stack, "jobs"),
    }
    tag = uuid.uuid4().hex[:8]
    orphan, running = f"req_orphan{tag}.pdf", f"req_running{tag}.pdf"
    for key in (orphan, running):
        stack.s3.client.put_object(Bucket=stack.s3.bucket, Key=f"jobs/{key}", Body=b"%PDF-1.4 left behind")
    ConversionJob.objects.create(
        request_id=f"req_running{tag}",
        organization=make_org(credits=10),
        environment="live",
        api_key_id="key_test",
        source_store="jobs",
        source_key=running,
        sha256="0" * 64,
        options={},
        max_pages=200,
        status=ConversionJob.Status.RUNNING,
    )
    # An object cannot be dated back in S3: a negative age makes every object old enough.
    settings.SVCX_SPOOL_MAX_AGE = -60

    deleted = job_inputs_sweep()

    assert deleted >= 1
    assert [k for k in stack.s3.keys("jobs/") if tag in k] == [f"jobs/{running}"]

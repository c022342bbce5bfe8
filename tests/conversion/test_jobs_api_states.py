"""/v2/jobs of jobs that wait (no worker reads the jobs queue here): cancel, a failed job's
result, a job of another organization, and the pages of a running job so far."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion.async_jobs import async_job_fail
from conversion.async_runner import async_job_lead
from conversion.models import Job
from core.errors import ErrorCode, ServiceError
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import make_pdf
from tests.conversion.test_async_jobs import book_page, job_settings
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]
__all__ = ["job_settings"]  # fixture


@pytest.fixture
def account(session_worker: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "secret": make_key(org).secret}


@pytest.fixture
def job_id(client: Client, account: dict[str, Any], tmp_path: Path) -> str:
    book = make_pdf(tmp_path / "book.pdf", [book_page(n) for n in range(1, 6)])
    response = client.post(
        "/v2/jobs", data=book.read_bytes(), content_type="application/pdf", **bearer(account["secret"])
    )
    assert response.status_code == 202
    return str(response.json()["id"])


def test_a_queued_job_is_canceled_bills_nothing_and_has_no_result(
    client: Client, account: dict[str, Any], job_id: str
) -> None:
    secret = account["secret"]
    assert client.get(f"/v2/jobs/{job_id}", **bearer(secret)).json()["status"] == "queued"
    assert credits_get(organization=account["org"], environment="live").held == 5

    canceled = client.post(f"/v2/jobs/{job_id}/cancel", **bearer(secret))

    assert canceled.status_code == 200
    assert (canceled.json()["status"], canceled.json()["credits_billed"]) == ("canceled", 0)
    assert client.post(f"/v2/jobs/{job_id}/cancel", **bearer(secret)).json()["status"] == "canceled"
    assert_envelope(client.get(f"/v2/jobs/{job_id}/result", **bearer(secret)), 409, "job_canceled")
    assert sorted(LedgerEntry.objects.filter(request_id=job_id).values_list("kind", "credits")) == [
        ("hold", -5),
        ("release", 5),
    ]
    assert credits_get(organization=account["org"], environment="live").balance == 100


def test_a_failed_job_answers_its_error_and_cannot_be_canceled(
    client: Client, account: dict[str, Any], job_id: str
) -> None:
    secret = account["secret"]
    async_job_fail(job_id=job_id, error=ServiceError(ErrorCode.PDF_TOO_COMPLEX, "Page 3 is too complex."))

    error = assert_envelope(client.get(f"/v2/jobs/{job_id}/result", **bearer(secret)), 409, "job_failed")
    assert error["details"]["error"]["code"] == "pdf_too_complex"
    job = client.get(f"/v2/jobs/{job_id}", **bearer(secret)).json()
    assert (job["status"], job["error"]["code"], job["credits_billed"]) == ("failed", "pdf_too_complex", 0)
    refused = assert_envelope(client.post(f"/v2/jobs/{job_id}/cancel", **bearer(secret)), 409, "job_not_cancelable")
    assert refused["details"]["status"] == "failed"


def test_a_job_is_seen_by_its_organization_and_environment_only(
    client: Client, account: dict[str, Any], job_id: str
) -> None:
    other = make_key(make_org(name="Other", credits=10)).secret
    test_key = make_key(account["org"], "test").secret
    for secret in (other, test_key):
        assert_envelope(client.get(f"/v2/jobs/{job_id}", **bearer(secret)), 404, "job_not_found")
        assert_envelope(client.post(f"/v2/jobs/{job_id}/cancel", **bearer(secret)), 404, "job_not_found")
        assert client.get("/v2/jobs", **bearer(secret)).json()["data"] == []
    assert_envelope(client.get("/v2/jobs/job_nope%00", **bearer(other)), 404, "job_not_found")
    assert Job.objects.get(pk=job_id).status == Job.Status.QUEUED


def test_the_result_of_a_running_job_is_its_pages_so_far(client: Client, account: dict[str, Any], job_id: str) -> None:
    secret = account["secret"]
    queued = client.get(f"/v2/jobs/{job_id}/result", **bearer(secret))
    assert queued.status_code == 200
    assert (queued.json()["status"], queued.json()["pages"], queued["X-Svcx-Job-Status"]) == ("queued", [], "queued")
    assert queued.json()["document"]["page_count"] == 5

    async_job_lead(job_id=job_id)  # a lead run here: the job ends

    done = client.get(f"/v2/jobs/{job_id}/result", **bearer(secret)).json()
    assert (done["status"], [p["page"] for p in done["pages"]]) == ("succeeded", [1, 2, 3, 4, 5])


def test_a_test_key_simulates_an_error_on_jobs_and_nothing_is_made(client: Client, account: dict[str, Any]) -> None:
    test_key = make_key(account["org"], "test").secret
    error = assert_envelope(
        client.post(
            "/v2/jobs",
            data=b"%PDF-1.7 not read",
            content_type="application/pdf",
            HTTP_X_SVCX_SIMULATE="insufficient_credits",
            **bearer(test_key),
        ),
        402,
        "insufficient_credits",
    )
    assert error["details"]["simulated"] is True
    assert not Job.objects.filter(organization=account["org"]).exists()

"""The conversion jobs list of the admin: newest first, with the status and the error code each
job failed with, filtered by either."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from accounts.models import Organization
from conversion.async_jobs import async_job_fail
from conversion.models import ConversionJob, Job
from core.errors import ErrorCode, ServiceError
from tests.factories import admin_url, make_key, make_org
from tests.factories import make_job as make_v2_job

pytestmark = [pytest.mark.django_db]


def make_job(
    org: Organization, request_id: str, minutes_ago: int, status: str, code: str | None = None, **fields: Any
) -> Any:
    """A job made `minutes_ago` minutes ago with `status`, failed with `code` when given."""
    job = ConversionJob.objects.create(
        request_id=request_id,
        organization=org,
        environment="live",
        api_key_id="key_x",
        source_key=f"jobs/{request_id}",
        sha256="0" * 64,
        status=status,
        error={"code": code, "message": "m"} if code else None,
        **fields,
    )
    # auto_now_add set created_at; the list's order is what is tested, so each job gets its own time.
    ConversionJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))
    return job


@pytest.fixture
def jobs() -> Organization:
    org = make_org("Acme")
    # Request ids sort the other way round from the times: the order cannot come from the ids.
    make_job(org, "req_a_newest", 1, "failed", "pdf_encrypted")
    make_job(org, "req_b_middle", 5, "succeeded")
    make_job(org, "req_c_oldest", 9, "failed", "pdf_invalid")
    return org


@pytest.fixture
def staff(client: Client) -> Any:
    user = get_user_model().objects.create_superuser("staff", "staff@example.com", "pw")
    client.force_login(user)
    return user


def _rows(body: str) -> list[tuple[str, str, str]]:
    """(request id, status, error code) of each row of the jobs list."""
    rows = re.findall(
        r'<th class="field-request_id"><a [^>]*>(req_\w+)</a></th>.*?'
        r'<td class="field-status">(\w+)</td><td class="field-error_code">([\w-]+)</td>',
        body,
        re.S,
    )
    return [(r, s, c) for r, s, c in rows]


def test_the_jobs_list_is_newest_first_with_status_and_error_code(client: Client, staff: Any, jobs: Any) -> None:
    body = client.get("/admin/conversion/conversionjob/").content.decode()

    assert _rows(body) == [
        ("req_a_newest", "Failed", "pdf_encrypted"),
        ("req_b_middle", "Succeeded", "-"),
        ("req_c_oldest", "Failed", "pdf_invalid"),
    ]


def test_the_jobs_list_filters_by_error_code_and_status(client: Client, staff: Any, jobs: Any) -> None:
    body = client.get("/admin/conversion/conversionjob/").content.decode()
    assert "By error code" in body
    assert '?error_code=pdf_encrypted"' in body
    assert '?error_code=pdf_invalid"' in body

    by_code = client.get("/admin/conversion/conversionjob/?error_code=pdf_invalid").content.decode()
    by_status = client.get("/admin/conversion/conversionjob/?status__exact=succeeded").content.decode()

    assert _rows(by_code) == [("req_c_oldest", "Failed", "pdf_invalid")]
    assert _rows(by_status) == [("req_b_middle", "Succeeded", "-")]


def test_version_2_jobs_are_listed_newest_first_and_read_only_with_their_parts(
    client: Client, staff: Any, three_pages: Any, settings: Any
) -> None:
    settings.SVCX_JOB_PART_PAGES = 2
    org = make_org("Acme", credits=20)
    key = make_key(org).api_key
    older = make_v2_job(org, key, three_pages)
    newer = make_v2_job(org, key, three_pages, pages=[1])
    async_job_fail(job_id=older.id, error=ServiceError(ErrorCode.PDF_TOO_COMPLEX, "Page 2 is too complex."))
    Job.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(minutes=5))

    body = client.get("/admin/conversion/job/").content.decode()
    rows = re.findall(
        r'<th class="field-id"><a [^>]*>(job_\w+)</a></th>.*?'
        r'<td class="field-status">(\w+)</td><td class="field-error_code">([\w-]+)</td>',
        body,
        re.S,
    )
    page = client.get(admin_url("conversion_job", older.id)).content.decode()

    assert rows == [(newer.id, "Queued", "-"), (older.id, "Failed", "pdf_too_complex")]
    assert client.get("/admin/conversion/job/?error_code=pdf_too_complex").content.decode().count("field-id") == 1
    assert "sealed_password" not in page
    assert '<div class="readonly">3</div>' in page  # credits held: shown, never an input
    assert 'name="credits_held"' not in page
    assert 'name="_save"' not in page
    assert page.count('<td class="field-index">') == 2  # its parts of 2 pages, read-only
    assert "parts-0-start" not in page


def test_an_organizations_page_links_its_version_2_jobs(client: Client, staff: Any, three_pages: Any) -> None:
    acme, globex = make_org("Acme", credits=5), make_org("Globex", credits=5)
    ours = make_v2_job(acme, make_key(acme).api_key, three_pages)
    theirs = make_v2_job(globex, make_key(globex).api_key, three_pages)

    page = client.get(admin_url("accounts_organization", acme.id)).content.decode()
    link = re.search(r'href="(/admin/conversion/job/\?organization__id__exact=\w+)">version 2 jobs</a>', page)

    assert link is not None
    listed = client.get(link.group(1)).content.decode()
    assert ours.id in listed
    assert theirs.id not in listed

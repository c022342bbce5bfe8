"""Version 2 jobs in the console: the Jobs page (newest first, by status and environment, a page
at a time), a job's page (facts, options, webhook metadata, error, ledger entries, webhook
deliveries), its result downloaded with the session (the bytes the API answers), Cancel (its hold
released, in the ledger), who may cancel, and links to jobs from the statement, the usage
records and the request pages. An expired job, or another organization's, is the console's 404
page. Jobs are made through the services (tests.factories.make_job) and run here, in-process
(`async_job_lead`): no worker is needed."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import AuditEvent, Membership, Organization
from billing.ledger import credits_grant
from billing.models import LedgerEntry
from billing.selectors import credits_get
from billing.usage import usage_copy
from conversion.async_jobs import async_job_fail
from conversion.async_runner import async_job_lead
from conversion.models import Job
from core.errors import ErrorCode, ServiceError
from tests.accounts.test_guards import _address
from tests.console.conftest import make_person, signed_in
from tests.console.test_requests import logged
from tests.factories import bearer, make_job, make_key
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_endpoint_create

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _no_lead_heartbeat(settings: Any) -> None:
    """A job run here (`async_job_lead`) ends long before its lead would beat: the beat, written
    on a connection of its own, would wait on the rows this test's transaction holds."""
    settings.SVCX_WORKER_HEARTBEAT_INTERVAL = 600.0


@pytest.fixture
def funded(acme: Organization) -> Organization:
    credits_grant(organization=acme, credits=100, actor_label="test")
    return acme


@pytest.fixture
def owner_key(funded: Organization, owner: Any) -> Any:
    return make_key(funded, name="batch", actor=owner)


def succeeded(org: Organization, minted: Any, pdf: Path, **kwargs: Any) -> Job:
    job = make_job(org, minted.api_key, pdf, **kwargs)
    async_job_lead(job_id=job.id)
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    return job


def failed(org: Organization, minted: Any, pdf: Path) -> Job:
    job = make_job(org, minted.api_key, pdf)
    async_job_fail(job_id=job.id, error=ServiceError(ErrorCode.PDF_TOO_COMPLEX, "Page 2 is too complex."))
    job.refresh_from_db()
    return job


def expired(job: Job) -> Job:
    """`job` ended and past its retention, not yet deleted by the sweeper."""
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.SUCCEEDED, finished_at=timezone.now(), expires_at=timezone.now() - timedelta(seconds=1)
    )
    return job


def listed(client: Client, org: Organization, query: str = "") -> list[str]:
    """The job ids of the Jobs page's rows, top to bottom."""
    page = client.get(f"/console/{org.id}/jobs/{query}")
    assert page.status_code == 200
    return re.findall(r'<tr data-job="(job_\w+)">', page.content.decode())


def row(client: Client, org: Organization, job: Job) -> list[list[str]]:
    """The words of each cell of the job's row on the Jobs page (tags left out)."""
    body = client.get(f"/console/{org.id}/jobs/?environment={job.environment}").content.decode()
    html = body.split(f'<tr data-job="{job.id}">')[1].split("</tr>")[0]
    cells = [cell.split(">", 1)[1].split("</td>")[0] for cell in html.split("<td")[1:]]
    return [re.sub(r"<[^>]+>", " ", cell).split() for cell in cells]


def test_the_jobs_page_lists_the_organizations_kept_jobs_newest_first(
    funded: Organization, owner_key: Any, member: Any, globex: Organization, three_pages: Path, settings: Any
) -> None:
    done = succeeded(funded, owner_key, three_pages, filename="annual report.pdf")
    broken = failed(funded, owner_key, three_pages)
    waiting = make_job(funded, owner_key.api_key, three_pages, pages=[1, 2])
    gone = expired(make_job(funded, owner_key.api_key, three_pages))
    testing = make_job(funded, make_key(funded, "test").api_key, three_pages)
    credits_grant(organization=globex, credits=10, actor_label="test")
    theirs = make_job(globex, make_key(globex).api_key, three_pages)
    client = signed_in(member, _address())  # a member reads jobs, as they read usage

    assert listed(client, funded) == [waiting.id, broken.id, done.id]
    assert listed(client, funded, "?status=failed") == [broken.id]
    assert listed(client, funded, "?environment=test") == [testing.id]
    page = client.get(f"/console/{funded.id}/jobs/").content.decode()
    assert theirs.id not in page
    assert gone.id not in page
    # created, job and file name, status and error code, pages done of total, held, billed, ended
    assert row(client, funded, done)[1:6] == [
        [done.id, "annual", "report.pdf"],
        ["succeeded"],
        ["3", "/", "3", "3", "of", "3"],
        ["3"],
        ["3"],
    ]
    assert row(client, funded, broken)[2:6] == [
        ["failed", "pdf_too_complex"],
        ["0", "/", "3", "0", "of", "3"],
        ["3"],
        ["0"],
    ]
    assert row(client, funded, waiting)[2:7] == [["queued"], ["0", "/", "2", "0", "of", "2"], ["2"], ["0"], ["–"]]
    nav = page.split("<nav>")[1].split("</nav>")[0]
    assert f'<a href="/console/{funded.id}/jobs/" class="current">Jobs</a>' in nav


def test_the_jobs_page_goes_a_page_at_a_time_and_says_what_is_wrong_with_a_cursor(
    funded: Organization, owner: Any, owner_key: Any, three_pages: Path, monkeypatch: Any
) -> None:
    jobs = [make_job(funded, owner_key.api_key, three_pages, pages=[1]) for _ in range(3)]
    monkeypatch.setattr("console.views.JOBS_PER_PAGE", 2)
    client = signed_in(owner, _address())

    first = client.get(f"/console/{funded.id}/jobs/?status=queued").content.decode()
    older = re.search(r'<a href="\?([^"]+)">Older jobs</a>', first)

    assert re.findall(r'<tr data-job="(job_\w+)">', first) == [jobs[2].id, jobs[1].id]
    assert older is not None
    second = client.get(f"/console/{funded.id}/jobs/?{older.group(1).replace('&amp;', '&')}").content.decode()
    assert re.findall(r'<tr data-job="(job_\w+)">', second) == [jobs[0].id]
    assert "Older jobs" not in second
    assert '<a href="?status=queued">Newest</a>' in second
    mistyped = client.get(f"/console/{funded.id}/jobs/?starting_after=job_nope")
    assert mistyped.status_code == 200
    assert "must be the id of a row of this list" in mistyped.content.decode()


def test_a_jobs_page_shows_its_facts_options_metadata_and_ledger(
    funded: Organization, owner: Any, owner_key: Any, three_pages: Path
) -> None:
    job = succeeded(
        funded,
        owner_key,
        three_pages,
        pages=[1, 3],
        options={
            "pages": "1,3",
            "tables": "html",
            "fallback": "empty",
            "flavor": "commonmark",
            "ocr": "auto",
            "ocr_languages": ["en", "de"],
        },
        webhook_metadata={"batch": "2026-11", "customer": 42},
    )
    console = signed_in(owner, _address())

    page = console.get(f"/console/{funded.id}/jobs/{job.id}/").content.decode()

    facts = page.split('id="job-facts"')[1].split("</dl>")[0]
    assert '<dd id="job-progress">2 of 2 pages converted (the document has 3)' in facts
    assert '<dd id="job-credits">2 held while it ran; 2 billed for 2 pages</dd>' in facts
    assert "batch" in facts
    assert owner_key.api_key.id in facts
    assert "(live)" in facts
    assert f'href="/console/{funded.id}/requests/{job.request_id}/"' in facts
    assert (
        "pages <code>1,3</code>, tables <code>html</code>, fallback <code>empty</code>, flavor <code>commonmark</code>, "
        "ocr <code>auto</code> in <code>en,de</code></dd>" in facts
    )
    assert "&quot;batch&quot;: &quot;2026-11&quot;,\n  &quot;customer&quot;: 42" in facts
    assert "job-error" not in facts
    ledger = page.split('id="job-ledger"')[1].split("</table>")[0]
    assert re.findall(r"<tr><td>[^<]+</td><td>(\w+)</td><td class=\"num\">(-?\d+)</td>", ledger) == [
        ("hold", "-2"),
        ("capture", "-2"),
    ]
    assert f'href="/console/{funded.id}/jobs/{job.id}/result.md"' in page
    # A job whose result was read by OCR says how many pages: 1 of its 2 at 3 credits.
    Job.objects.filter(pk=job.pk).update(ocr_pages=1, credits_held=4, credits_billed=4)
    again = console.get(f"/console/{funded.id}/jobs/{job.id}/").content.decode()
    assert '<dd id="job-credits">4 held while it ran; 4 billed for 2 pages (1 page read by OCR)</dd>' in again
    assert f'href="/console/{funded.id}/jobs/{job.id}/result.json"' in page
    assert "job-cancel" not in page  # it has ended


def test_a_failed_job_names_its_error_and_has_no_result(
    funded: Organization, member: Any, owner_key: Any, three_pages: Path
) -> None:
    job = failed(funded, owner_key, three_pages)
    client = signed_in(member, _address())

    page = client.get(f"/console/{funded.id}/jobs/{job.id}/").content.decode()

    error = page.split('id="job-error"')[1].split("</dd>")[0]
    assert '<a href="/docs/errors/pdf_too_complex"><code>pdf_too_complex</code></a>: Page 2 is too complex.' in error
    assert "result.md" not in page
    assert "Webhook deliveries" not in page  # the delivery log is the owners' and admins'
    assert client.get(f"/console/{funded.id}/jobs/{job.id}/result.md").status_code == 404
    queued = make_job(funded, owner_key.api_key, three_pages)
    assert client.get(f"/console/{funded.id}/jobs/{queued.id}/result.json").status_code == 404
    # The pages its pre-flight counted for OCR were an estimate: held, never read nor billed.
    estimated = make_job(funded, owner_key.api_key, three_pages, ocr_pages=1)
    async_job_fail(job_id=estimated.id, error=ServiceError(ErrorCode.PDF_TOO_COMPLEX, "Page 2 is too complex."))
    credits = client.get(f"/console/{funded.id}/jobs/{estimated.id}/").content.decode()
    assert (
        '<dd id="job-credits">5 held while it ran; 0 billed for 0 pages '
        "(1 page estimated to be read by OCR, held at their price; none billed)</dd>" in credits
    )
    assert "read by OCR)" not in credits


def test_the_result_downloads_are_the_bytes_the_api_answers(
    funded: Organization, member: Any, owner_key: Any, three_pages: Path
) -> None:
    job = succeeded(funded, owner_key, three_pages)
    console, api = signed_in(member, _address()), Client()

    for fmt, accept in (("md", "text/markdown"), ("json", "application/json")):
        download = console.get(f"/console/{funded.id}/jobs/{job.id}/result.{fmt}")
        answer = api.get(f"/v2/jobs/{job.id}/result", HTTP_ACCEPT=accept, **bearer(owner_key.secret))

        assert (download.status_code, answer.status_code) == (200, 200)
        assert download.content == answer.content, fmt
        assert download["Content-Type"].split(";")[0] == accept
        assert download["Content-Disposition"] == f'attachment; filename="{job.id}.{fmt}"'
    markdown = console.get(f"/console/{funded.id}/jobs/{job.id}/result.md").content.decode()
    assert markdown.startswith("<!-- page 1 -->\n\n")
    assert "<!-- page 3 -->" in markdown


def test_cancel_asks_first_then_releases_the_hold_and_the_ledger_shows_it(
    funded: Organization, owner: Any, owner_key: Any, three_pages: Path, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = webhook_endpoint_create(organization=funded, url="http://127.0.0.1:9/hooks", events=["job.canceled"])
    job = make_job(funded, owner_key.api_key, three_pages)
    client = signed_in(owner, _address())
    assert credits_get(organization=funded, environment="live").held == 3
    job_url = f"/console/{funded.id}/jobs/{job.id}/"

    assert 'id="job-cancel"' in client.get(job_url).content.decode()
    confirm = client.get(f"{job_url}cancel/")
    assert confirm.status_code == 200
    assert "Cancel the job" in confirm.content.decode()
    assert Job.objects.get(pk=job.pk).status == Job.Status.QUEUED  # asking changed nothing
    done = client.post(f"{job_url}cancel/")

    assert done.status_code == 302
    assert done["Location"] == job_url
    assert Job.objects.get(pk=job.pk).status == Job.Status.CANCELED
    assert sorted(LedgerEntry.objects.filter(request_id=job.id).values_list("kind", "credits")) == [
        ("hold", -3),
        ("release", 3),
    ]
    assert credits_get(organization=funded, environment="live").held == 0
    assert credits_get(organization=funded, environment="live").balance == 100
    page = client.get(job_url).content.decode()
    assert "its 3 held credits are released" in page
    ledger = page.split('id="job-ledger"')[1].split("</table>")[0]
    assert re.findall(r"<tr><td>[^<]+</td><td>(\w+)</td>", ledger) == ["hold", "release"]
    assert 'id="job-cancel"' not in page
    delivery = WebhookDelivery.objects.get(endpoint=endpoint.endpoint)
    deliveries = page.split('id="job-deliveries"')[1].split("</table>")[0]
    assert f'href="/console/{funded.id}/webhooks/{endpoint.endpoint.id}/deliveries/{delivery.pk}/"' in deliveries
    assert "job.canceled" in deliveries
    audit = AuditEvent.objects.get(organization=funded, action="job.cancel")
    assert (audit.target, audit.actor_label) == (job.id, owner.get_username())
    statement = client.get(f"/console/{funded.id}/statement/").content.decode()
    assert f'<a href="{job_url}"><code>{job.id}</code></a>' in statement
    assert "hold → release" in statement
    # Again, on the job that has ended: refused in words, nothing moves.
    again = client.post(f"{job_url}cancel/", follow=True).content.decode()
    assert "only a queued or running job can be canceled" in again
    assert LedgerEntry.objects.filter(request_id=job.id).count() == 2


def test_cancel_needs_the_csrf_token(funded: Organization, owner: Any, owner_key: Any, three_pages: Path) -> None:
    job = make_job(funded, owner_key.api_key, three_pages)
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=_address())
    client.force_login(owner)

    assert client.post(f"/console/{funded.id}/jobs/{job.id}/cancel/").status_code == 403
    assert Job.objects.get(pk=job.pk).status == Job.Status.QUEUED


def test_owners_and_admins_cancel_any_job_members_the_jobs_of_their_keys(
    funded: Organization, owner_key: Any, member: Any, three_pages: Path
) -> None:
    admin = make_person(funded, "ada@acme.test", Membership.Role.ADMIN)
    mikes = make_key(funded, name="mike's", actor=member)
    theirs = make_job(funded, owner_key.api_key, three_pages)
    his = make_job(funded, mikes.api_key, three_pages)
    also_theirs = make_job(funded, owner_key.api_key, three_pages)
    mike = signed_in(member, _address())

    assert 'id="job-cancel"' not in mike.get(f"/console/{funded.id}/jobs/{theirs.id}/").content.decode()
    for method in ("get", "post"):
        assert getattr(mike, method)(f"/console/{funded.id}/jobs/{theirs.id}/cancel/").status_code == 403
    assert Job.objects.get(pk=theirs.pk).status == Job.Status.QUEUED
    assert 'id="job-cancel"' in mike.get(f"/console/{funded.id}/jobs/{his.id}/").content.decode()
    assert mike.post(f"/console/{funded.id}/jobs/{his.id}/cancel/").status_code == 302
    assert Job.objects.get(pk=his.pk).status == Job.Status.CANCELED
    assert signed_in(admin, _address()).post(f"/console/{funded.id}/jobs/{also_theirs.id}/cancel/").status_code == 302
    assert Job.objects.get(pk=also_theirs.pk).status == Job.Status.CANCELED


def test_an_expired_or_another_organizations_job_is_the_consoles_404_page(
    funded: Organization, owner: Any, owner_key: Any, globex: Organization, three_pages: Path
) -> None:
    gone = expired(succeeded(funded, owner_key, three_pages))
    credits_grant(organization=globex, credits=10, actor_label="test")
    theirs = make_job(globex, make_key(globex).api_key, three_pages)
    client = signed_in(owner, _address())

    for org, job_id in ((funded.id, gone.id), (funded.id, theirs.id), (globex.id, theirs.id), (funded.id, "job_x%00")):
        for suffix in ("", "cancel/", "result.md", "result.json"):
            answer = client.get(f"/console/{org}/jobs/{job_id}/{suffix}")
            assert answer.status_code == 404, (job_id, suffix)
            assert answer["Content-Type"].startswith("text/html"), (job_id, suffix)
            assert "<h1>Not found</h1>" in answer.content.decode()
    assert client.post(f"/console/{funded.id}/jobs/{theirs.id}/cancel/").status_code == 404
    assert Job.objects.get(pk=theirs.pk).status == Job.Status.QUEUED


def test_statement_usage_and_request_rows_link_jobs_and_v1_requests_keep_their_pages(
    funded: Organization, owner: Any, owner_key: Any, three_pages: Path
) -> None:
    key = owner_key.api_key
    job = succeeded(funded, owner_key, three_pages)
    gone = expired(succeeded(funded, owner_key, three_pages))
    requests = {
        job.request_id: ("POST", "/v2/jobs", 202),  # the request that created the job
        "req_readresult0001": ("GET", f"/v2/jobs/{job.id}/result", 200),
        "req_convertv10001": ("POST", "/v1/convert", 200),
    }
    for request_id, (method, endpoint, status) in requests.items():
        logged(funded, key, request_id, status=status, method=method, endpoint=endpoint)
    usage_copy()
    client = signed_in(owner, _address())
    job_link = f'<a href="/console/{funded.id}/jobs/{job.id}/"><code>{job.id}</code></a>'

    statement = client.get(f"/console/{funded.id}/statement/").content.decode()
    assert job_link in statement
    assert f'<code>{gone.id}</code> <span class="muted">(job expired)</span>' in statement
    assert f"/jobs/{gone.id}/" not in statement
    usage = client.get(f"/console/{funded.id}/usage/").content.decode()
    rows = {
        m.group(1): m.group(0)
        for m in re.finditer(r"<tr><td>[^<]*</td><td><a href=\"[^\"]*/requests/(req_\w+)/\".*?</tr>", usage)
    }
    assert set(rows) == set(requests)
    assert job_link in rows[job.request_id]
    assert job_link in rows["req_readresult0001"]
    assert "/jobs/" not in rows["req_convertv10001"]
    assert f'href="/console/{funded.id}/requests/req_convertv10001/"' in rows["req_convertv10001"]
    created_by = client.get(f"/console/{funded.id}/requests/{job.request_id}/").content.decode()
    assert f'<dd id="request-v2-job">{job_link}</dd>' in created_by
    # An old link to the request page under the job's id opens the job.
    moved = client.get(f"/console/{funded.id}/requests/{job.id}/")
    assert (moved.status_code, moved["Location"]) == (302, f"/console/{funded.id}/jobs/{job.id}/")

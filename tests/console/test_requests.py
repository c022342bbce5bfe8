"""A request of the request log, one click from the usage records and the statement: what it
asked, how it answered (status, error code and message), its pages, credits and duration, its
job and the ledger entries it moved; nothing of another organization's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from accounts.models import Organization
from billing.ledger import credits_capture, credits_grant, credits_hold
from billing.usage import request_log_record, usage_copy
from conversion.models import ConversionJob
from tests.accounts.test_guards import _address
from tests.console.conftest import signed_in
from tests.factories import make_key

pytestmark = [pytest.mark.django_db]

WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def logged(org: Organization, key: Any, request_id: str, *, status: int = 200, code: str = "", **fields: Any) -> None:
    request_log_record(
        request_id=request_id,
        organization_id=org.id,
        environment=key.environment,
        api_key_id=key.id,
        status=status,
        error_code=code,
        client_ip="198.51.100.7",
        created_at=WHEN,
        **{"method": "POST", "endpoint": "/v1/convert", "pages": 0, "credits": 0, "duration_ms": 0.0, **fields},
    )


def job(org: Organization, key: Any, request_id: str, **fields: Any) -> ConversionJob:
    return ConversionJob.objects.create(
        request_id=request_id,
        organization=org,
        environment=key.environment,
        api_key_id=key.id,
        source_key=f"jobs/{request_id}",
        sha256="0" * 64,
        **fields,
    )


def test_a_conversion_shows_what_it_cost_and_the_entries_it_moved(acme: Organization, owner: Any) -> None:
    key = make_key(acme, name="nightly batch").api_key
    credits_grant(organization=acme, credits=50, actor_label="test")
    credits_hold(organization=acme, environment="live", api_key_id=key.id, request_id="req_conv1", pages=5)
    credits_capture(request_id="req_conv1", pages=3)
    job(acme, key, "req_conv1", status="succeeded", pages_completed=3, pages_billed=3, credits_billed=3)
    logged(acme, key, "req_conv1", pages=3, credits=3, duration_ms=1834.4)

    page = signed_in(owner, _address()).get(f"/console/{acme.id}/requests/req_conv1/").content.decode()

    facts = page.split('id="request-facts"')[1].split("</dl>")[0]
    assert "POST /v1/convert" in facts
    assert "nightly batch" in facts
    assert key.id in facts
    assert '<dd id="request-status">200</dd>' in facts
    assert '<dd id="request-pages">3</dd>' in facts
    assert '<dd id="request-credits">3</dd>' in facts
    assert '<dd id="request-duration">1834 ms</dd>' in facts
    assert "198.51.100.7" in facts  # an owner sees the client's address
    assert "succeeded; 3 pages converted" in facts
    ledger = page.split('id="request-ledger"')[1].split("</table>")[0]
    rows = [[cell.split("</td>")[0] for cell in row.split("<td")[1:]] for row in ledger.split("<tr>")[2:]]
    # kind, credits, pages, balance change, available change of each entry, oldest first
    assert [row[1:6] for row in rows] == [
        [">hold", ' class="num">-5', ' class="num">5', ' class="num">0', ' class="num">-5'],
        [">capture", ' class="num">-3', ' class="num">3', ' class="num">-3', ' class="num">0'],
        [">release", ' class="num">2', ' class="num">2', ' class="num">0', ' class="num">2'],
    ]


def test_a_failed_request_names_its_code_and_message(acme: Organization, owner: Any, member: Any) -> None:
    key = make_key(acme).api_key
    message = "The PDF is encrypted and needs a password to open."
    job(acme, key, "req_fail1", status="failed", error={"code": "pdf_encrypted", "message": message})
    logged(acme, key, "req_fail1", status=422, code="pdf_encrypted", duration_ms=41.0)

    page = signed_in(member, _address()).get(f"/console/{acme.id}/requests/req_fail1/").content.decode()

    error = page.split('id="request-error"')[1].split("</dd>")[0]
    assert '<a href="/docs/errors/pdf_encrypted"><code>pdf_encrypted</code></a>' in error
    assert message in error
    assert '<dd id="request-status">422</dd>' in page
    assert "None: this request moved no credits." in page
    assert "198.51.100.7" not in page  # a member does not see client addresses


def test_a_request_still_running_shows_its_job_and_its_hold(acme: Organization, owner: Any) -> None:
    key = make_key(acme).api_key
    credits_grant(organization=acme, credits=50, actor_label="test")
    credits_hold(organization=acme, environment="live", api_key_id=key.id, request_id="req_run1", pages=4)
    job(acme, key, "req_run1", status="running", pages_completed=1)

    page = signed_in(owner, _address()).get(f"/console/{acme.id}/requests/req_run1/").content.decode()

    assert "not answered yet" in page
    assert "running; 1 page converted" in page
    assert page.split('id="request-ledger"')[1].count("<td>hold</td>") == 1


def test_another_organizations_request_is_not_found(acme: Organization, globex: Organization, owner: Any) -> None:
    theirs = make_key(globex).api_key
    logged(globex, theirs, "req_theirs", pages=2, credits=2)
    client = signed_in(owner, _address())

    assert client.get(f"/console/{acme.id}/requests/req_theirs/").status_code == 404
    assert client.get(f"/console/{acme.id}/requests/req_nothing/").status_code == 404
    # Nor through their organization's address: the owner is no member of it.
    assert client.get(f"/console/{globex.id}/requests/req_theirs/").status_code == 404


def test_usage_records_and_the_statement_link_each_request(acme: Organization, owner: Any) -> None:
    key = make_key(acme).api_key
    credits_grant(organization=acme, credits=50, actor_label="test")
    credits_hold(organization=acme, environment="live", api_key_id=key.id, request_id="req_link1", pages=2)
    credits_capture(request_id="req_link1", pages=2)
    logged(acme, key, "req_link1", pages=2, credits=2)
    usage_copy()
    client = signed_in(owner, _address())
    link = f'href="/console/{acme.id}/requests/req_link1/"'

    assert link in client.get(f"/console/{acme.id}/usage/").content.decode()
    assert link in client.get(f"/console/{acme.id}/statement/").content.decode()
    assert client.get(f"/console/{acme.id}/requests/req_link1/").status_code == 200

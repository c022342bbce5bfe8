"""Version 2 jobs in the SDK: what creating one sends in each encoding, the typed job, the list,
the result, the stream of pages read again from where it stopped, waiting, and cancel. Against
a real HTTP server on 127.0.0.1 that answers what each test scripts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from scripted_server import Canned, Scripted, Sleeps, conversion, envelope, job, job_body, ndjson
from svcx_client import (
    APIConnectionError,
    ConfigurationError,
    ConversionPage,
    InvalidRequestError,
    Job,
    JobCanceledError,
    JobFailedError,
    JobResult,
    JobWaitTimeout,
)
from svcx_client.client import STREAM_PAUSE
from test_sdk_retries import client_for

PDF = b"%PDF-1.7 test body"


def failed_result(code: str = "pdf_too_complex") -> Canned:
    error = {"code": code, "message": "Page 3 is too complex.", "param": None, "details": {"page": 3}}
    return envelope(409, "job_failed", "invalid_request_error", details={"error": error})


def test_a_named_file_is_sent_as_multipart_so_the_job_keeps_its_name(
    server: Scripted, sleeps: Sleeps, tmp_path: Path
) -> None:
    pdf = tmp_path / "book.pdf"
    pdf.write_bytes(PDF)
    server.answers = [job(http_status=202, total=10, webhook_metadata={"batch": 7})]

    created = client_for(server, sleeps).create_job(
        pdf, pages="1-10", tables="html", password="pässwörd", metadata={"m": 1}, webhook_metadata={"batch": 7}
    )

    seen = server.seen[0]
    assert (seen.method, seen.path) == ("POST", "/v2/jobs")
    assert seen.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert seen.headers["idempotency-key"].startswith("svcx-py-")
    assert b'name="file"; filename="book.pdf"' in seen.body
    assert PDF in seen.body
    assert b'name="options"\r\n\r\n{"pages": "1-10", "tables": "html"}\r\n' in seen.body
    assert b'name="webhook_metadata"\r\n\r\n{"batch": 7}\r\n' in seen.body
    assert 'name="password"\r\n\r\npässwörd\r\n'.encode() in seen.body
    assert isinstance(created, Job)
    assert (created.id, created.status, created.pages_total, created.credits_held) == ("job_1", "queued", 10, 10)
    assert created.created_at == datetime(2026, 11, 27, 5, 40, 12, 123456, tzinfo=UTC)
    assert (created.started_at, created.ended, created.webhook_metadata) == (None, False, {"batch": 7})
    assert (created.options.pages, created.options.tables, created.error) == (None, "markdown", None)


def test_bytes_go_as_the_raw_pdf_and_a_stored_file_by_its_id(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [job(http_status=202), job(http_status=202)]
    client = client_for(server, sleeps)

    client.create_job(PDF, pages="2", webhook_metadata={"n": 1}, metadata={"m": 2}, idempotency_key="mine")
    client.create_job(file_id="file_1", fallback="error", webhook_metadata={"n": 2})

    raw, stored = server.seen
    assert (raw.path, raw.body, raw.query) == ("/v2/jobs/raw", PDF, {"pages": ["2"]})
    assert (raw.headers["x-svcx-webhook-metadata"], raw.headers["x-svcx-metadata"]) == ('{"n":1}', '{"m":2}')
    assert raw.headers["idempotency-key"] == "mine"
    assert stored.path == "/v2/jobs"
    assert json.loads(stored.body) == {
        "file_id": "file_1",
        "options": {"fallback": "error"},
        "webhook_metadata": {"n": 2},
    }
    with pytest.raises(ConfigurationError, match="debug"):
        client.create_job(PDF, debug=True)  # type: ignore[call-arg]
    assert len(server.seen) == 2


def test_ocr_options_go_in_the_query_comma_separated_or_in_the_options_object(server: Scripted, sleeps: Sleeps) -> None:
    plan = [{"page": n, "ocr": n > 1} for n in (1, 2, 3)]
    estimate = {
        "pages": 3,
        "ocr_pages": 2,
        "credits": 7,
        "credits_per_page": 1,
        "credits_per_ocr_page": 3,
        "plan": plan,
        "upper_bound": True,
    }
    server.answers = [
        Canned(body=json.dumps({"object": "inspection", "page_count": 3, "pages": [], "estimate": estimate}).encode()),
        job(http_status=202, ocr_pages=1),
    ]
    client = client_for(server, sleeps)

    found = client.inspect_job(PDF, ocr="auto", ocr_languages=("en", "de"))
    created = client.create_job(file_id="file_1", ocr="force", ocr_languages=["fr"])

    inspected, stored = server.seen
    assert (inspected.path, inspected.query) == ("/v2/inspect/raw", {"ocr": ["auto"], "ocr_languages": ["en,de"]})
    assert found.estimate is not None
    assert (found.page_count, found.estimate.credits, [p.ocr for p in found.estimate.plan]) == (
        3,
        7,
        [False, True, True],
    )
    assert found.estimate.upper_bound is True
    assert json.loads(stored.body)["options"] == {"ocr": "force", "ocr_languages": ["fr"]}
    assert created.ocr_pages == 1


def test_creating_a_job_is_retried_with_the_same_idempotency_key(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [Canned(drop=True), envelope(503, "overloaded", "overloaded_error", retryable=True), job()]

    created = client_for(server, sleeps).create_job(PDF)

    assert created.id == "job_1"
    assert len({s.headers["idempotency-key"] for s in server.seen}) == 1
    assert [s.body for s in server.seen] == [PDF] * 3


def test_jobs_are_listed_page_after_page_with_their_status(server: Scripted, sleeps: Sleeps) -> None:
    def page(ids: list[str], has_more: bool) -> Canned:
        rows = [job_body(i, "succeeded") for i in ids]
        return Canned(body=json.dumps({"object": "list", "data": rows, "has_more": has_more}).encode())

    server.answers = [page(["job_3", "job_2"], True), page(["job_1"], False)]

    found = list(client_for(server, sleeps).iter_jobs(page_size=2, status="succeeded"))

    assert [j.id for j in found] == ["job_3", "job_2", "job_1"]
    assert [j.credits_billed for j in found] == [3, 3, 3]
    assert [s.query for s in server.seen] == [
        {"limit": ["2"], "status": ["succeeded"]},
        {"limit": ["2"], "starting_after": ["job_2"], "status": ["succeeded"]},
    ]


def test_the_result_is_a_conversion_with_the_job_and_markdown_says_the_status(server: Scripted, sleeps: Sleeps) -> None:
    result = json.loads(conversion(pages=2).body)
    server.answers = [
        Canned(body=json.dumps({**result, "job_id": "job_1", "status": "running"}).encode()),
        Canned(
            body=b"<!-- page 1 -->\n\nPage 1\n",
            headers={"Content-Type": "text/markdown", "X-Svcx-Job-Status": "running", "X-Svcx-Pages-Billed": "0"},
        ),
    ]
    client = client_for(server, sleeps)

    json_result = client.job_result("job_1")
    markdown = client.job_markdown("job_1")

    assert isinstance(json_result, JobResult)
    assert (json_result.job_id, json_result.status, [p.page for p in json_result.pages]) == ("job_1", "running", [1, 2])
    assert [s.headers["accept"] for s in server.seen] == ["application/json", "text/markdown"]
    assert {s.path for s in server.seen} == {"/v2/jobs/job_1/result"}
    assert (markdown.job_id, markdown.status, markdown.markdown) == ("job_1", "running", "<!-- page 1 -->\n\nPage 1\n")


def test_pages_are_streamed_and_read_again_after_what_came_until_the_job_succeeds(
    server: Scripted, sleeps: Sleeps
) -> None:
    server.answers = [ndjson([1, 2]), ndjson([]), ndjson([3], status="running"), ndjson([4], status="succeeded")]

    pages = list(client_for(server, sleeps).iter_job_pages("job_1"))

    assert [p.page for p in pages] == [1, 2, 3, 4]
    assert [p.markdown for p in pages] == ["Page 1", "Page 2", "Page 3", "Page 4"]
    assert [s.query["after"] for s in server.seen] == [["0"], ["2"], ["2"], ["3"]]
    assert {s.headers["accept"] for s in server.seen} == {"application/x-ndjson"}
    assert sleeps.waits == [STREAM_PAUSE]  # after the stream that brought nothing


def test_a_broken_stream_is_read_again_from_the_last_whole_page(server: Scripted, sleeps: Sleeps) -> None:
    whole = ndjson([1, 2, 3], status="succeeded")
    server.answers = [ndjson([1, 2, 3], cut=len(whole.body) - 10), ndjson([3], status="succeeded")]

    pages = list(client_for(server, sleeps).iter_job_pages("job_1"))

    assert [p.page for p in pages] == [1, 2, 3]
    assert [s.query["after"] for s in server.seen] == [["0"], ["2"]]


def test_a_stream_that_breaks_again_and_again_with_nothing_raises(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [ndjson([1], cut=5) for _ in range(3)]

    with pytest.raises(APIConnectionError):
        list(client_for(server, sleeps, max_retries=1).iter_job_pages("job_1"))

    assert len(server.seen) == 2


def test_the_pages_of_a_job_that_fails_come_before_its_error(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [ndjson([1, 2]), failed_result()]
    pages: list[ConversionPage] = []

    with pytest.raises(JobFailedError) as raised:
        pages += client_for(server, sleeps).iter_job_pages("job_1")

    assert [p.page for p in pages] == [1, 2]
    error = raised.value
    assert (error.status, error.code, error.job_id) == (409, "job_failed", "job_1")
    assert error.job_error is not None
    assert (error.job_error.code, error.job_error.details) == ("pdf_too_complex", {"page": 3})
    assert (
        str(error)
        == "pdf_too_complex: Page 3 is too complex. (job job_1 failed: HTTP 409 job_failed, request req_test)"
    )
    assert isinstance(error, InvalidRequestError)


def test_waiting_reads_the_job_until_it_succeeds_and_reports_progress(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [
        job(status="queued"),
        job(status="running", completed=1),
        job(status="running", completed=3),
        job(status="succeeded", completed=3),
    ]
    seen: list[tuple[str, int]] = []

    done = client_for(server, sleeps).wait_job(
        "job_1", poll_interval=0.5, on_progress=lambda j: seen.append((j.status, j.pages_completed))
    )

    assert (done.status, done.credits_billed, done.ended) == ("succeeded", 3, True)
    assert seen == [("queued", 0), ("running", 1), ("running", 3), ("succeeded", 3)]
    assert sleeps.waits == [0.5, 0.5, 0.5]
    assert {s.path for s in server.seen} == {"/v2/jobs/job_1"}


def test_waiting_for_a_job_that_fails_raises_its_error_with_the_job(server: Scripted, sleeps: Sleeps) -> None:
    failure: dict[str, Any] = {
        "code": "pdf_too_complex",
        "message": "Page 3 is too complex.",
        "param": None,
        "details": {},
    }
    server.answers = [job(status="running"), job(status="failed", error=failure), failed_result()]

    with pytest.raises(JobFailedError) as raised:
        client_for(server, sleeps).wait_job("job_1")

    error = raised.value
    assert error.job is not None
    assert (error.job.status, error.job.error and error.job.error.code) == ("failed", "pdf_too_complex")
    assert error.job_error is not None
    assert error.job_error.code == "pdf_too_complex"
    assert [s.path for s in server.seen][-1] == "/v2/jobs/job_1/result"


def test_waiting_for_a_canceled_job_raises_and_a_timeout_leaves_it_running(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [
        job(status="canceled"),
        envelope(409, "job_canceled", "invalid_request_error"),
        job(status="running", completed=1),
    ]
    client = client_for(server, sleeps)

    with pytest.raises(JobCanceledError) as canceled:
        client.wait_job("job_1")
    with pytest.raises(JobWaitTimeout) as timed_out:
        client.wait_job("job_1", timeout=0)

    assert (canceled.value.code, canceled.value.job_id) == ("job_canceled", "job_1")
    assert canceled.value.job is not None
    assert canceled.value.job.status == "canceled"
    assert timed_out.value.job.pages_completed == 1
    assert "still running (1 of 3 pages)" in str(timed_out.value)
    assert sleeps.waits == []


def test_cancel_posts_with_an_idempotency_key_and_an_ended_job_is_refused(server: Scripted, sleeps: Sleeps) -> None:
    server.answers = [
        job(status="canceled"),
        envelope(409, "job_not_cancelable", "invalid_request_error", details={"status": "succeeded"}),
    ]
    client = client_for(server, sleeps)

    canceled = client.cancel_job("job_1")
    with pytest.raises(InvalidRequestError) as refused:
        client.cancel_job("job/2")

    first, second = server.seen
    assert (first.method, first.path) == ("POST", "/v2/jobs/job_1/cancel")
    assert first.headers["idempotency-key"].startswith("svcx-py-")
    assert second.path == "/v2/jobs/job%2F2/cancel"
    assert (canceled.status, canceled.credits_held, canceled.credits_billed) == ("canceled", 0, 0)
    assert (refused.value.code, refused.value.details) == ("job_not_cancelable", {"status": "succeeded"})

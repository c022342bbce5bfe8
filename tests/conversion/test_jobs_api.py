"""/v2/jobs over HTTP with real workers: create in the three encodings, read, list, the result
as JSON, Markdown and a stream of pages, money held and captured once, and the refusals."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from billing.limits import MeterName
from billing.meters import OrgScope, meter_peek
from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion import engine
from conversion.models import Job
from tests.conftest import WorkerProcess, start_worker
from tests.conversion.engine.pdfs import Image, Text, lines, make_pdf
from tests.conversion.test_async_jobs import JOB_ENV, book_page, job_settings
from tests.conversion.test_figures import CAPTION, CAPTION_MD, PROSE, downloaded_bytes, png_size
from tests.factories import bearer, make_key, make_org
from tests.svcx.test_envelope import assert_envelope

pytestmark = [pytest.mark.django_db(transaction=True)]
__all__ = ["job_settings"]  # fixture


@pytest.fixture(scope="module")
def workers(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """A worker of every queue: the interactive pre-flight of an upload and the job's parts."""
    with django_db_blocker.unblock():
        worker = start_worker(
            tmp_path_factory.mktemp("jobs-api"),
            queues="default,convert,convert_test,jobs,jobs_test",
            env=JOB_ENV,
            concurrency=2,
        )
    yield worker
    worker.stop()


@pytest.fixture
def book(tmp_path: Path) -> Path:
    return make_pdf(tmp_path / "book.pdf", [book_page(n) for n in range(1, 11)])


@pytest.fixture
def account(workers: WorkerProcess) -> dict[str, Any]:
    org = make_org(credits=100)
    return {"org": org, "key": make_key(org)}


def wait_done(client: Client, secret: str, job_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v2/jobs/{job_id}", **bearer(secret)).json()
        if body["status"] not in ("queued", "running"):
            return body
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} not done in {timeout} s")


def test_a_raw_pdf_job_is_converted_as_one_conversion_and_billed_once(
    client: Client, account: dict[str, Any], book: Path
) -> None:
    secret = account["key"].secret
    created = client.post(
        "/v2/jobs?tables=markdown", data=book.read_bytes(), content_type="application/pdf", **bearer(secret)
    )

    assert created.status_code == 202
    job = created.json()
    assert created["Location"] == f"/v2/jobs/{job['id']}"
    assert (job["object"], job["pages_total"], job["credits_held"]) == ("job", 10, 10)
    assert job["status"] in ("queued", "running")
    done = wait_done(client, secret, job["id"])
    assert (done["status"], done["pages_completed"], done["credits_billed"], done["pages_billed"]) == (
        "succeeded",
        10,
        10,
        10,
    )
    result = client.get(f"/v2/jobs/{job['id']}/result", **bearer(secret))
    assert result.status_code == 200
    body = result.json()
    whole = engine.convert(book)
    assert body["markdown"] == whole.markdown
    assert (body["job_id"], body["status"], len(body["pages"])) == (job["id"], "succeeded", 10)
    markdown = client.get(f"/v2/jobs/{job['id']}/result", HTTP_ACCEPT="text/markdown", **bearer(secret))
    assert markdown.content.decode().startswith("<!-- page 1 -->")
    assert markdown["X-Svcx-Credits-Billed"] == "10"
    stream = client.get(f"/v2/jobs/{job['id']}/result?after=7", HTTP_ACCEPT="application/x-ndjson", **bearer(secret))
    lines = [json.loads(line) for line in b"".join(stream.streaming_content).decode().splitlines()]  # type: ignore[attr-defined]
    assert [p["page"] for p in lines] == [8, 9, 10]
    assert [p["markdown"] for p in lines] == [p.markdown for p in whole.pages[7:]]
    assert sorted(LedgerEntry.objects.filter(request_id=job["id"]).values_list("kind", "credits")) == [
        ("capture", -10),
        ("hold", -10),
    ]
    assert credits_get(organization=account["org"], environment="live").balance == 90


def test_a_stored_file_and_a_selection_with_webhook_metadata(
    client: Client, account: dict[str, Any], book: Path
) -> None:
    secret = account["key"].secret
    stored = client.post("/v1/files", data=book.read_bytes(), content_type="application/pdf", **bearer(secret))
    assert stored.status_code == 201
    created = client.post(
        "/v2/jobs",
        data={"file_id": stored.json()["id"], "options": {"pages": "2-4"}, "webhook_metadata": {"batch": 7}},
        content_type="application/json",
        **bearer(secret),
    )

    assert created.status_code == 202
    job = created.json()
    assert (job["pages_total"], job["webhook_metadata"], job["options"]["pages"]) == (3, {"batch": 7}, "2-4")
    assert (job["options"]["figures"], job["options"]["chunking"]) == ("none", None)  # the defaults
    assert wait_done(client, secret, job["id"])["status"] == "succeeded"
    body = client.get(f"/v2/jobs/{job['id']}/result", **bearer(secret)).json()
    assert body["markdown"] == engine.convert(book, pages=[2, 3, 4]).markdown


def test_a_multipart_job_and_the_list_of_jobs(client: Client, account: dict[str, Any], book: Path) -> None:
    secret = account["key"].secret
    ids = []
    for pages in ("1", "1-2"):
        with book.open("rb") as handle:
            response = client.post(
                "/v2/jobs",
                data={"file": handle, "options": json.dumps({"pages": pages}), "webhook_metadata": '{"n": 1}'},
                **bearer(secret),
            )
        assert response.status_code == 202, response.content
        ids.append(response.json()["id"])
    for job_id in ids:
        wait_done(client, secret, job_id)

    first = client.get("/v2/jobs?limit=1", **bearer(secret)).json()
    assert (first["object"], [j["id"] for j in first["data"]], first["has_more"]) == ("list", [ids[1]], True)
    rest = client.get(f"/v2/jobs?limit=5&starting_after={ids[1]}", **bearer(secret)).json()
    assert [j["id"] for j in rest["data"]] == [ids[0]]
    assert len(client.get("/v2/jobs?status=succeeded", **bearer(secret)).json()["data"]) == 2
    assert client.get("/v2/jobs?status=queued", **bearer(secret)).json()["data"] == []
    assert_envelope(client.get("/v2/jobs?status=done", **bearer(secret)), 400, "invalid_parameter_type")


def test_the_same_idempotency_key_creates_one_job(client: Client, account: dict[str, Any], book: Path) -> None:
    secret = account["key"].secret
    answers = [
        client.post(
            "/v2/jobs",
            data=book.read_bytes(),
            content_type="application/pdf",
            HTTP_IDEMPOTENCY_KEY="batch-1",
            **bearer(secret),
        )
        for _ in range(2)
    ]

    assert [a.status_code for a in answers] == [202, 202]
    assert answers[0].json()["id"] == answers[1].json()["id"]
    assert Job.objects.filter(organization=account["org"]).count() == 1
    # Ended before the tables are emptied: the module's worker, still writing the job's parts,
    # deadlocked with the emptying in 1 of 2 suite runs.
    assert wait_done(client, secret, answers[0].json()["id"])["status"] == "succeeded"


@pytest.mark.usefixtures("one_window")
def test_refusals_leave_nothing_behind(client: Client, book: Path, workers: WorkerProcess, settings: Any) -> None:
    poor = make_org(credits=3)
    secret = make_key(poor).secret
    refused = client.post("/v2/jobs", data=book.read_bytes(), content_type="application/pdf", **bearer(secret))
    assert_envelope(refused, 402, "insufficient_credits")
    # Not a page converted: the page meters do not keep the book's pages, and say so.
    scope = OrgScope(organization=poor, environment="live")
    assert (meter_peek(scope, MeterName.PAGES).used, meter_peek(scope, MeterName.NEW_ACCOUNT).used) == (0, 0)
    assert refused.headers["x-ratelimit-remaining-pages"] == refused.headers["x-ratelimit-limit-pages"]
    settings.SVCX_JOB_MAX_PAGES = 2
    error = assert_envelope(
        client.post("/v2/jobs?pages=1-3", data=book.read_bytes(), content_type="application/pdf", **bearer(secret)),
        400,
        "too_many_pages",
    )
    assert (error["param"], error["details"]["max_pages"]) == ("pages", 2)
    assert not Job.objects.filter(organization=poor).exists()
    assert credits_get(organization=poor, environment="live").held == 0
    reader = make_key(poor, preset="read_only").secret
    assert_envelope(client.get("/v2/jobs", **bearer(reader)), 403, "insufficient_scope")


def test_a_job_with_figures_crop_links_each_figure_to_its_stored_picture(
    client: Client, account: dict[str, Any], tmp_path: Path
) -> None:
    secret = account["key"].secret
    pdf = make_pdf(
        tmp_path / "atlas.pdf",
        [book_page(1), [*lines(72, 720, PROSE), Image(72, 500, 300, 660), Text(72, 485, CAPTION, 9)]],
    )
    with pdf.open("rb") as handle:
        created = client.post(
            "/v2/jobs",
            data={"file": handle, "options": json.dumps({"figures": "crop", "chunking": {"max_tokens": 128}})},
            **bearer(secret),
        )
    assert created.status_code == 202
    job = created.json()
    assert job["options"]["figures"] == "crop"
    assert job["options"]["chunking"] == {"strategy": "structure", "max_tokens": 128, "overlap_tokens": 0}
    assert wait_done(client, secret, job["id"])["status"] == "succeeded"

    body = client.get(f"/v2/jobs/{job['id']}/result", **bearer(secret)).json()
    (figure,) = [e for e in body["pages"][1]["elements"] if e["type"] == "figure"]
    image = figure["image"]
    assert (image["dpi"], image["width"], image["height"]) == (144, 456, 320)
    link = f"![Figure 2: The orchard \\[in May\\]]({image['file_id']})"
    assert body["pages"][1]["markdown"] == " ".join(PROSE) + "\n\n" + link + "\n\n" + CAPTION_MD
    assert link in body["markdown"]
    assert body["credits_billed"] == 2
    # The pages streamed while the job ran have the link too.
    stream = client.get(f"/v2/jobs/{job['id']}/result?after=1", HTTP_ACCEPT="application/x-ndjson", **bearer(secret))
    (page,) = [json.loads(line) for line in b"".join(stream.streaming_content).decode().splitlines()]  # type: ignore[attr-defined]
    assert page["markdown"] == body["pages"][1]["markdown"]
    downloaded = client.get(f"/v1/files/{image['file_id']}/content", **bearer(secret))
    assert (downloaded.status_code, downloaded["Content-Type"]) == (200, "image/png")
    assert png_size(downloaded_bytes(downloaded)) == (456, 320)
    assert client.get(f"/v1/files/{image['file_id']}", **bearer(secret)).json()["filename"] == "atlas-p2-fig1.png"

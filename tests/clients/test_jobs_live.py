"""Version 2 jobs through the SDK and the `svcx` command against a live service: gunicorn and a
real Celery worker of the jobs queues (parts of 3 pages, streams of pages ended after a second).

`svcx convert --async` writes the Markdown the synchronous command writes, and the ledger has one
hold and one capture for the job; the stream of pages yields every page in order, as one
conversion has them; the job commands list and show the jobs. (Jobs that wait, canceled and
interrupted: test_jobs_waiting_live.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from svcx_client import Client

from billing.models import LedgerEntry
from conversion.models import Job
from tests.clients.test_cli_live import svcx
from tests.conftest import WorkerProcess, start_web
from tests.conversion.engine.pdfs import make_pdf
from tests.conversion.test_async_jobs import JOB_ENV, book_page
from tests.conversion.test_jobs_api import workers
from tests.factories import make_key, make_org

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["workers"]  # fixture: a worker of every queue, the jobs' included

# The web's streams of pages end after a second: a client reads them again (`after`).
JOBS_WEB_ENV = {**JOB_ENV, "SVCX_JOB_STREAM_SECONDS": "1s"}


@pytest.fixture(scope="module")
def jobs_web(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with django_db_blocker.unblock():
        process, base = start_web(tmp_path_factory.mktemp("jobs-web"), env=JOBS_WEB_ENV)
    yield base
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """Ten pages of a book: chapters, running feet, a word hyphenated across two parts."""
    return make_pdf(tmp_path / "book.pdf", [book_page(n) for n in range(1, 11)])


def test_convert_async_writes_the_markdown_of_the_sync_command_and_bills_the_job_once(
    jobs_web: str, workers: WorkerProcess, book: Path, tmp_path: Path
) -> None:
    org = make_org(credits=100)
    key = make_key(org).secret

    now = svcx("convert", book, "-o", tmp_path / "sync", key=key, base=jobs_web)
    later = svcx("convert", "--async", book, "-o", tmp_path / "async", key=key, base=jobs_web)

    assert now.returncode == 0, now.stderr
    assert later.returncode == 0, later.stderr
    assert "Traceback" not in later.stderr
    markdown = (tmp_path / "async" / "book.md").read_text()
    assert markdown == (tmp_path / "sync" / "book.md").read_text()
    assert markdown.count("<!-- page ") == 10
    assert later.stdout.strip() == "svcx: 1 converted, 0 skipped (already done), 0 failed; 10 pages, 10 credits billed"
    [job] = Job.objects.filter(organization=org)
    assert (job.status, job.filename) == (Job.Status.SUCCEEDED, "book.pdf")
    assert sorted(LedgerEntry.objects.filter(request_id=job.id).values_list("kind", "credits")) == [
        ("capture", -10),
        ("hold", -10),
    ]

    again = svcx("convert", "--async", book, "-o", tmp_path / "async", key=key, base=jobs_web)
    listed = svcx("jobs", key=key, base=jobs_web)
    shown = svcx("job", job.id, "--json", key=key, base=jobs_web)

    assert again.stdout.strip() == "svcx: 0 converted, 1 skipped (already done), 0 failed; 0 pages, 0 credits billed"
    assert Job.objects.filter(organization=org).count() == 1
    [line] = listed.stdout.splitlines()
    assert line.startswith(f"{job.id}  succeeded  10/10 pages  10 credits billed  ")
    assert line.endswith("  book.pdf")
    assert json.loads(shown.stdout)["credits_billed"] == 10


def test_the_stream_of_pages_yields_every_page_in_order(jobs_web: str, workers: WorkerProcess, book: Path) -> None:
    org = make_org(credits=100)

    with Client(make_key(org).secret, base_url=jobs_web) as client:
        whole = client.convert(book)
        job = client.create_job(book.read_bytes(), webhook_metadata={"batch": 7})
        pages = list(client.iter_job_pages(job.id))
        done = client.wait_job(job.id, poll_interval=0.2)
        result = client.job_result(job.id)
        again = list(client.iter_job_pages(job.id, after=8))

    assert (job.status, job.pages_total, job.webhook_metadata, job.filename) == ("queued", 10, {"batch": 7}, "")
    assert [p.page for p in pages] == list(range(1, 11))
    assert [p.markdown for p in pages] == [p.markdown for p in whole.pages]
    assert (done.status, done.pages_completed, done.credits_billed) == ("succeeded", 10, 10)
    assert (result.job_id, result.status, result.markdown) == (job.id, "succeeded", whole.markdown)
    assert [p.page for p in again] == [9, 10]

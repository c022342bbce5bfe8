"""Version 2 jobs that wait, through the SDK and the `svcx` command against a live service:
gunicorn (streams of pages ended after a second) and a real worker of the interactive queues
only, so a job stays queued until the test runs its lead in-process or fails it.

Ctrl-C during `svcx convert --async` leaves the jobs running and names them, `svcx cancel` ends
them and bills nothing; `wait_job` raises on a canceled or failed job; the stream of pages is
read again across its ends until the job ends, and raises the job's error when it fails."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
from svcx_client import Client, ConversionPage, JobCanceledError, JobFailedError, SvcxError

from billing.models import LedgerEntry
from billing.selectors import credits_get
from conversion import engine
from conversion.async_jobs import async_job_fail
from conversion.async_runner import async_job_lead
from conversion.models import Job
from core.errors import ErrorCode, ServiceError
from tests.clients.test_cli_live import SVCX, svcx
from tests.clients.test_jobs_live import jobs_web
from tests.conftest import WorkerProcess
from tests.conversion.engine.pdfs import make_pdf
from tests.conversion.test_async_jobs import book_page, job_settings
from tests.factories import make_key, make_org

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["job_settings", "jobs_web"]  # fixtures


def book(path: Path, pages: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return make_pdf(path, [book_page(n) for n in range(1, pages + 1)])


def ledger(job_id: str) -> list[tuple[str, int]]:
    return sorted(LedgerEntry.objects.filter(request_id=job_id).values_list("kind", "credits"))


class Counting(httpx.HTTPTransport):
    """A transport that keeps the `after` of each request for a job's pages."""

    def __init__(self) -> None:
        super().__init__()
        self.afters: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/result"):
            self.afters.append(request.url.params.get("after"))
        return super().handle_request(request)


def test_ctrl_c_leaves_the_jobs_running_and_names_them_and_cancel_bills_nothing(
    jobs_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    org = make_org(credits=100)
    key = make_key(org).secret
    book(tmp_path / "in" / "a.pdf", 4)
    book(tmp_path / "in" / "b.pdf", 2)
    inherited = {k: v for k, v in os.environ.items() if k not in ("SVCX_KEY", "SVCX_URL")}
    running = subprocess.Popen(
        [str(SVCX), "convert", "--async", str(tmp_path / "in")],
        env={**inherited, "SVCX_API_KEY": key, "SVCX_BASE_URL": jobs_web},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As a terminal starts it: a suite started in the background by a shell without job
        # control runs with Ctrl-C ignored, which its children inherit (Python then never
        # raises KeyboardInterrupt, and the command polls on).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while Job.objects.filter(organization=org).count() < 2 and time.monotonic() < deadline:
        time.sleep(0.1)

    running.send_signal(signal.SIGINT)
    out, err = running.communicate(timeout=60)

    ids = sorted(Job.objects.filter(organization=org).values_list("id", flat=True))
    assert len(ids) == 2
    assert (running.returncode, out) == (130, "")
    assert err.splitlines() == [
        f"svcx: 2 jobs left running: {' '.join(ids)}",
        f"svcx: they go on and bill when they succeed; to cancel them: svcx cancel {' '.join(ids)}",
        "svcx: interrupted",
    ]
    assert set(Job.objects.filter(id__in=ids).values_list("status", flat=True)) == {Job.Status.QUEUED}
    assert credits_get(organization=org, environment="live").held == 6
    assert not list((tmp_path / "in").glob("*.md"))

    canceled = svcx("cancel", *ids, key=key, base=jobs_web)

    assert canceled.returncode == 0, canceled.stderr
    assert canceled.stdout.splitlines() == [f"{job_id}: canceled, nothing billed" for job_id in ids]
    with Client(key, base_url=jobs_web) as client, pytest.raises(JobCanceledError) as raised:
        client.wait_job(ids[0])
    assert raised.value.job is not None
    assert (raised.value.job.status, raised.value.job_id, raised.value.code) == ("canceled", ids[0], "job_canceled")
    assert {job.filename: ledger(job.id) for job in Job.objects.filter(id__in=ids)} == {
        "a.pdf": [("hold", -4), ("release", 4)],
        "b.pdf": [("hold", -2), ("release", 2)],
    }
    assert credits_get(organization=org, environment="live").balance == 100


def test_wait_job_and_the_pages_of_a_canceled_job_raise(
    jobs_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    org = make_org(credits=10)

    with Client(make_key(org).secret, base_url=jobs_web) as client:
        job = client.create_job(book(tmp_path / "book.pdf", 3), pages="1-2")
        canceled = client.cancel_job(job.id)
        again = client.cancel_job(job.id)
        with pytest.raises(JobCanceledError) as waited:
            client.wait_job(job.id, poll_interval=0.1)
        with pytest.raises(JobCanceledError):
            client.job_markdown(job.id)
        with pytest.raises(JobCanceledError):
            list(client.iter_job_pages(job.id))

    assert (job.status, job.filename, job.pages_total, job.credits_held) == ("queued", "book.pdf", 2, 2)
    assert (canceled.status, canceled.credits_billed, again.status) == ("canceled", 0, "canceled")
    assert waited.value.job is not None
    assert waited.value.job.id == job.id
    assert ledger(job.id) == [("hold", -2), ("release", 2)]


def test_the_pages_are_read_again_across_stream_ends_until_the_job_ends(
    jobs_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    pdf = book(tmp_path / "book.pdf", 7)
    counting = Counting()
    pages: list[ConversionPage] = []
    errors: list[SvcxError] = []

    with Client(make_key(make_org(credits=10)).secret, base_url=jobs_web, transport=counting) as client:
        job = client.create_job(pdf)

        def read() -> None:
            try:
                pages.extend(client.iter_job_pages(job.id))
            except SvcxError as error:
                errors.append(error)

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(2.5)  # streams of a queued job end after a second each, with no page
        async_job_lead(job_id=job.id)  # the job is converted here, in the test's process
        reader.join(timeout=60)

    assert errors == []
    assert [p.page for p in pages] == [1, 2, 3, 4, 5, 6, 7]
    assert [p.markdown for p in pages] == [p.markdown for p in engine.convert(pdf).pages]
    assert len(counting.afters) >= 3
    assert counting.afters[:2] == ["0", "0"]
    assert ledger(job.id) == [("capture", -7), ("hold", -7)]


def test_a_job_that_fails_raises_its_error_from_the_stream_and_from_waiting(
    jobs_web: str, session_worker: WorkerProcess, tmp_path: Path
) -> None:
    pdf = book(tmp_path / "book.pdf", 3)
    errors: list[SvcxError] = []

    with Client(make_key(make_org(credits=10)).secret, base_url=jobs_web) as client:
        job = client.create_job(pdf)

        def read() -> None:
            try:
                list(client.iter_job_pages(job.id))
            except SvcxError as error:
                errors.append(error)

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(1.5)
        async_job_fail(job_id=job.id, error=ServiceError(ErrorCode.PDF_TOO_COMPLEX, "Page 2 is too complex."))
        reader.join(timeout=60)
        with pytest.raises(JobFailedError) as waited:
            client.wait_job(job.id)

    [streamed] = errors
    assert isinstance(streamed, JobFailedError)
    assert streamed.job_error is not None
    assert (streamed.job_id, streamed.job_error.code, streamed.job_error.message) == (
        job.id,
        "pdf_too_complex",
        "Page 2 is too complex.",
    )
    assert str(streamed).startswith(
        f"pdf_too_complex: Page 2 is too complex. (job {job.id} failed: HTTP 409 job_failed"
    )
    assert waited.value.job is not None
    assert waited.value.job.error is not None
    assert (waited.value.job.status, waited.value.job.error.code) == ("failed", "pdf_too_complex")
    assert ledger(job.id) == [("hold", -3), ("release", 3)]

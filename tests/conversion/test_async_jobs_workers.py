"""Version 2 jobs over two real worker processes: the parts parsed in parallel, the pages
those of one conversion, the money held and captured once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from billing.selectors import credits_get
from conversion import engine
from conversion.async_jobs import job_pages_so_far, job_result_bytes
from conversion.models import Job, JobPart
from tests.conftest import WorkerProcess, start_worker
from tests.conversion.test_async_jobs import (
    JOB_ENV,
    JOB_QUEUES,
    account,
    book,
    create,
    job_settings,
    movements,
    stored_names,
    wait_ended,
)

pytestmark = [pytest.mark.django_db(transaction=True)]
__all__ = ["account", "book", "job_settings"]  # fixtures


@pytest.fixture(scope="module")
def job_workers(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[WorkerProcess]]:
    """Two worker processes on the jobs queues, one of them running the beat's sweeper (for the
    module: tests using them need committed data, as they have)."""
    with django_db_blocker.unblock():
        workers = [
            start_worker(tmp_path_factory.mktemp("a"), queues=JOB_QUEUES, env=JOB_ENV, beat=True),
            start_worker(tmp_path_factory.mktemp("b"), queues=JOB_QUEUES, env=JOB_ENV),
        ]
    yield workers
    for worker in workers:
        worker.stop()


def test_a_job_over_two_workers_gives_one_conversions_pages_and_bills_them_once(
    account: dict[str, Any], book: Path, job_workers: list[WorkerProcess]
) -> None:
    job = wait_ended(create(account, book))

    assert job.status == Job.Status.SUCCEEDED, job.error
    result = json.loads(job_result_bytes(job=job))
    whole = engine.convert(book)
    # The document-level work across parts: the running foot dropped, the word made whole.
    assert result["markdown"] == whole.markdown
    assert "harvest and the railway" in result["markdown"]
    assert "THE RIVER BOOK" not in result["markdown"]
    assert [p["markdown"] for p in result["pages"]] == [p.markdown for p in whole.pages]
    assert (job.pages_total, job.pages_completed, job.parts_total) == (14, 14, 5)
    assert movements(job) == [("capture", -14), ("hold", -14)]
    assert (job.credits_billed, job.pages_billed) == (14, 14)
    assert credits_get(organization=account["org"], environment="live").balance == 986
    # The pages as a reader of the job gets them; the parts' layout is gone.
    assert [p["page"] for p in job_pages_so_far(job=job)] == list(range(1, 15))
    assert [p["page"] for p in job_pages_so_far(job=job, after=12)] == [13, 14]
    assert stored_names(job) == ["input.pdf", f"result-{job.lead_attempts}.json"]  # the kept lead's
    assert set(JobPart.objects.filter(job=job).values_list("status", flat=True)) == {JobPart.Status.DONE}


def test_a_selection_is_converted_as_one_conversion_of_it(
    account: dict[str, Any], book: Path, job_workers: list[WorkerProcess]
) -> None:
    selected = [2, 3, 5, 6, 7, 8, 11]
    job = wait_ended(create(account, book, pages=selected))

    assert job.status == Job.Status.SUCCEEDED, job.error
    assert json.loads(job_result_bytes(job=job))["markdown"] == engine.convert(book, pages=selected).markdown
    assert movements(job) == [("capture", -7), ("hold", -7)]

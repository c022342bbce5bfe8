"""A conversion or version 2 job that chose the PDFium engine while the service offered it, and
waited while the operator turned it off (SVCX_PDFIUM_ENGINE), fails with engine_not_found when a
worker takes it: it never runs on the withdrawn engine, and its hold is released (nothing billed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from billing.models import CreditHold
from billing.selectors import credits_get
from conversion import engine
from conversion.models import ConversionJob, Job, JobPart
from conversion.runner import job_run
from tests.conftest import WorkerProcess, start_worker
from tests.conversion.test_async_jobs import (
    JOB_ENV,
    JOB_QUEUES,
    account,
    book,
    create,
    job_settings,
    movements,
    wait_ended,
)
from tests.factories import make_org, make_queued_conversion

pytestmark = [pytest.mark.django_db(transaction=True)]
__all__ = ["account", "book", "job_settings"]  # fixtures


@pytest.fixture(scope="module")
def workers_without_pdfium(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[WorkerProcess]]:
    """Two worker processes on the jobs queues, started after the operator turned the PDFium
    engine off."""
    env = {**JOB_ENV, "SVCX_PDFIUM_ENGINE": "false"}
    with django_db_blocker.unblock():
        workers = [
            start_worker(tmp_path_factory.mktemp("a"), queues=JOB_QUEUES, env=env),
            start_worker(tmp_path_factory.mktemp("b"), queues=JOB_QUEUES, env=env),
        ]
    yield workers
    for worker in workers:
        worker.stop()


def test_a_queued_job_of_a_withdrawn_engine_fails_engine_not_found_and_releases_its_hold(
    account: dict[str, Any], book: Path, workers_without_pdfium: list[WorkerProcess]
) -> None:
    # Accepted while the engine was offered (the request's validation is the web side's).
    job = wait_ended(create(account, book, options={"engine": engine.PDFIUM_ENGINE_ID}))

    assert job.status == Job.Status.FAILED
    assert job.error["code"] == "engine_not_found"
    assert (job.error["param"], job.error["details"]) == ("options.engine", {"accepted": [engine.ENGINE_ID]})
    assert movements(job) == [("hold", -14), ("release", 14)]
    assert (job.credits_billed, job.pages_billed) == (0, 0)
    assert credits_get(organization=account["org"], environment="live").balance == 1000
    assert not CreditHold.objects.filter(request_id=job.id, status=CreditHold.Status.HELD).exists()
    # No part was parsed by the withdrawn engine.
    assert not JobPart.objects.filter(job=job, status=JobPart.Status.DONE).exists()


def test_a_job_of_the_default_engine_runs_on_the_same_workers(
    account: dict[str, Any], book: Path, workers_without_pdfium: list[WorkerProcess]
) -> None:
    job = wait_ended(create(account, book))

    assert job.status == Job.Status.SUCCEEDED, job.error
    assert movements(job) == [("capture", -14), ("hold", -14)]


@pytest.fixture
def job_store(settings: Any, tmp_path: Path) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "jobs": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}},
    }


@pytest.mark.usefixtures("job_store")
@pytest.mark.parametrize("offered", [False, True])
def test_a_queued_conversion_of_a_withdrawn_engine_fails_before_its_hold(
    book: Path, settings: Any, offered: bool
) -> None:
    # The worker's side of a version 1 conversion (run here): queued with the PDFium engine,
    # taken after the operator turned it off (or, as a control, while it is still on).
    settings.SVCX_PDFIUM_ENGINE = offered
    org = make_org(credits=100)
    make_queued_conversion(org, "req_withdrawn", book, engine_id=engine.PDFIUM_ENGINE_ID)

    job_run(request_id="req_withdrawn")

    job = ConversionJob.objects.get(pk="req_withdrawn")
    if offered:
        assert job.status == ConversionJob.Status.SUCCEEDED, job.error
        return
    assert job.status == ConversionJob.Status.FAILED
    assert (job.error["code"], job.error["param"]) == ("engine_not_found", "options.engine")
    assert job.error["details"] == {"accepted": [engine.ENGINE_ID]}
    assert (job.pages_billed, job.credits_billed) == (0, 0)
    assert not CreditHold.objects.filter(request_id="req_withdrawn").exists()
    assert credits_get(organization=org, environment="live").balance == 100

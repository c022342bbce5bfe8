"""The job side of the store, in process: what a worker does when the object is missing, and the
backstop that deletes the uploads of jobs whose web and worker both died."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import storages
from django.utils import timezone

from billing.models import CreditHold
from conversion.jobs import job_inputs_discard
from conversion.maintenance import conversion_housekeeping, job_inputs_sweep
from conversion.models import ConversionJob
from conversion.runner import job_run
from conversion.store import Store, job_input_key, object_put
from tests.factories import make_org

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def stores(settings: Any, tmp_path: Path) -> Path:
    settings.STORAGES = {
        **settings.STORAGES,
        "files": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "f")},
        },
        "jobs": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "j")},
        },
    }
    return tmp_path


def make_job(request_id: str, store: Store, key: str, **fields: Any) -> ConversionJob:
    return ConversionJob.objects.create(
        request_id=request_id,
        organization=make_org(credits=10),
        environment="live",
        api_key_id="key_test",
        source_store=store,
        source_key=key,
        sha256="0" * 64,
        options={"pages": None, "tables": "markdown", "fallback": "empty", "flavor": "default"},
        max_pages=200,
        **fields,
    )


def test_a_stored_file_deleted_before_the_job_ran_fails_it_with_file_not_found(stores: Path) -> None:
    make_job("req_gone", Store.FILES, "org_x/live/ab/abc.pdf")

    job_run(request_id="req_gone")

    job = ConversionJob.objects.get(pk="req_gone")
    assert (job.status, job.error["code"], job.error["param"]) == ("failed", "file_not_found", "file_id")
    assert (job.pages_billed, job.credits_billed) == (0, 0)
    assert not CreditHold.objects.exists()


def test_the_worker_deletes_the_job_upload_when_the_job_ends_but_never_a_stored_file(
    stores: Path, three_pages: Path
) -> None:
    upload_key = object_put(Store.JOBS, job_input_key("req_upload"), three_pages)
    stored_key = object_put(Store.FILES, "org_x/live/ab/abc.pdf", three_pages)
    make_job("req_upload", Store.JOBS, upload_key, kind=ConversionJob.Kind.FILE)
    make_job("req_stored", Store.FILES, stored_key, kind=ConversionJob.Kind.FILE)

    job_run(request_id="req_upload")
    job_run(request_id="req_stored")

    assert ConversionJob.objects.get(pk="req_upload").result == {"page_count": 3}
    assert ConversionJob.objects.get(pk="req_stored").result == {"page_count": 3}
    assert not storages["jobs"].exists(upload_key)
    assert storages["files"].exists(stored_key)


def test_housekeeping_deletes_the_uploads_of_jobs_it_forgets(stores: Path, three_pages: Path) -> None:
    old_key = object_put(Store.JOBS, job_input_key("req_old"), three_pages)
    new_key = object_put(Store.JOBS, job_input_key("req_new"), three_pages)
    make_job("req_old", Store.JOBS, old_key)
    make_job("req_new", Store.JOBS, new_key)
    ConversionJob.objects.filter(pk="req_old").update(created_at=timezone.now() - timedelta(days=3))

    conversion_housekeeping()

    assert list(ConversionJob.objects.values_list("pk", flat=True)) == ["req_new"]
    assert not storages["jobs"].exists(old_key)
    assert storages["jobs"].exists(new_key)


def test_a_redis_fault_while_discarding_still_deletes_the_upload_and_raises_nothing(
    stores: Path, three_pages: Path, settings: Any
) -> None:
    key = object_put(Store.JOBS, job_input_key("req_blip"), three_pages)
    job = make_job("req_blip", Store.JOBS, key)
    # A real Redis client against a port nothing listens on: the sealed password cannot be deleted.
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }

    job_inputs_discard(job=job)

    assert not storages["jobs"].exists(key)


def _age(path: Path, seconds: float) -> None:
    then = timezone.now().timestamp() - seconds
    os.utime(path, (then, then))


def test_the_sweep_deletes_job_uploads_older_than_the_spool_age_unless_their_job_still_runs(
    stores: Path, three_pages: Path, settings: Any
) -> None:
    # Left by a web process and a worker that both died, with no job row (it never committed).
    orphan = object_put(Store.JOBS, job_input_key("req_orphan"), three_pages)
    finished = object_put(Store.JOBS, job_input_key("req_finished"), three_pages)
    running = object_put(Store.JOBS, job_input_key("req_running"), three_pages)
    fresh = object_put(Store.JOBS, job_input_key("req_fresh"), three_pages)
    make_job("req_finished", Store.JOBS, finished, status=ConversionJob.Status.FAILED)
    make_job("req_running", Store.JOBS, running, status=ConversionJob.Status.RUNNING)
    for key in (orphan, finished, running):
        _age(Path(storages["jobs"].path(key)), settings.SVCX_SPOOL_MAX_AGE + 60)

    deleted = job_inputs_sweep()

    assert deleted == 2
    assert sorted(Path(p).name for p in storages["jobs"].listdir("")[1]) == sorted([running, fresh])

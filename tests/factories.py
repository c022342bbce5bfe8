"""Builders of test data through the real services (so tests exercise what production does)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.contrib.admin.utils import quote
from django.urls import reverse

from accounts import services
from accounts.models import Organization
from billing.ledger import credits_grant
from conversion import engine
from conversion.async_jobs import JobSource, async_job_create
from conversion.models import ConversionJob, Job, new_job_id
from conversion.store import Store, job_input_key, object_put
from core.ids import new_request_id


def admin_url(model: str, pk: Any, view: str = "change") -> str:
    """The admin page `view` of object `pk` of `model` ("app_model"), its id quoted as the admin's
    own links are: the admin reads "_2B" in a URL as "+", and ids are random base62 after "_"."""
    return reverse(f"admin:{model}_{view}", args=[quote(pk)])


def make_org(name: str = "Acme", *, credits: int = 0, **kwargs: Any) -> Organization:
    organization = services.organization_create(name=name, **kwargs)
    if credits:
        credits_grant(organization=organization, credits=credits, actor_label="test")
    return organization


def make_key(organization: Organization, environment: str = "live", **kwargs: Any) -> services.MintedKey:
    return services.api_key_create(organization=organization, environment=environment, **kwargs)


def bearer(secret: str) -> dict[str, Any]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def make_job(
    organization: Organization, api_key: Any, pdf: Path, *, pages: list[int] | None = None, **kwargs: Any
) -> Job:
    """A version 2 job of `pdf` made as POST /v2/jobs makes it: its upload in the async store,
    the credits of its pages held, its tasks queued on commit (no worker runs them unless a test
    starts one; `async_job_lead(job_id=...)` runs it here)."""
    job_id = new_job_id()
    source = JobSource(
        store=Store.ASYNC,
        key=object_put(Store.ASYNC, f"{job_id}/input.pdf", pdf),
        sha256=hashlib.sha256(pdf.read_bytes()).hexdigest(),
        filename=kwargs.pop("filename", pdf.name),
    )
    count = engine.preflight(pdf).page_count or 0
    return async_job_create(
        job_id=job_id,
        organization=organization,
        environment=api_key.environment,
        api_key_id=api_key.id,
        request_id=kwargs.pop("request_id", None) or new_request_id(),
        source=source,
        options=kwargs.pop("options", None)
        or {"pages": None, "tables": "markdown", "fallback": "empty", "flavor": "gfm"},
        pages=pages or list(range(1, count + 1)),
        page_count=count,
        **kwargs,
    )


def make_queued_conversion(
    organization: Organization, request_id: str, pdf: Path, *, engine_id: str | None = None
) -> ConversionJob:
    """A version 1 conversion as the web side queues it for a worker: its PDF in the jobs store
    (the test points STORAGES["jobs"] at a folder of its own), default options, nothing held yet
    (the worker holds). `conversion.runner.job_run(request_id=...)` runs it here."""
    options: dict[str, Any] = {"pages": None, "tables": "markdown", "fallback": "empty", "flavor": "gfm"}
    if engine_id is not None:
        options["engine"] = engine_id
    return ConversionJob.objects.create(
        request_id=request_id,
        organization=organization,
        environment="live",
        api_key_id="key_test",
        source_store=Store.JOBS,
        source_key=object_put(Store.JOBS, job_input_key(request_id), pdf),
        sha256="0" * 64,
        options=options,
        max_pages=200,
    )

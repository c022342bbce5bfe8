"""Conversion jobs, the result cache, and idempotency records."""

from __future__ import annotations

from django.db import models

from accounts.models import ENVIRONMENT_CHOICES, Organization
from core.ids import new_file_id, new_id


class ConversionJob(models.Model):
    """One conversion request handed to a worker. The web request waits for it to finish.

    Status moves queued -> running -> succeeded | failed, or to abandoned when the web side
    gave up (client gone, wait exceeded): a worker that finishes an abandoned job releases its
    hold. The worker never bills: the web side captures the hold as it delivers the 200.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        ABANDONED = "abandoned"

    class Kind(models.TextChoices):
        CONVERT = "convert"
        INSPECT = "inspect"
        TOC = "toc"
        FILE = "file"  # the pre-flight of an upload to /v1/files

    request_id = models.CharField(primary_key=True, max_length=40)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.CONVERT)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    api_key_id = models.CharField(max_length=40)
    # Where the worker fetches the PDF: the alias of settings.STORAGES ("jobs" for an upload,
    # "files" for a stored file) and the object's key in it.
    source_store = models.CharField(max_length=10, default="jobs")
    source_key = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    options = models.JSONField(default=dict)
    cache_key = models.CharField(max_length=64, blank=True, default="")
    max_pages = models.IntegerField(default=0)
    debug = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    pages_completed = models.IntegerField(default=0)
    # Outcome: the cached result's key on success, or the error (code, message, param, details).
    error = models.JSONField(null=True, blank=True)
    # The answer of a job other than a conversion (whose result goes to the result cache).
    result = models.JSONField(null=True, blank=True)
    pages_billed = models.IntegerField(default=0)
    credits_billed = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Renewed by the worker every few seconds while it runs the job; a stale one means the
    # worker was lost.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the web side answered 200 with the result and captured the credits (the same
    # transaction): a conversion bills only as it is delivered.
    delivered_at = models.DateTimeField(null=True, blank=True)
    # Renewed every few seconds by the web thread waiting for the job: a stale one means the
    # request died with its web process, and the worker gives the job up.
    waiter_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "created_at"], name="job_status_time")]

    def __str__(self) -> str:
        return f"{self.request_id} {self.status}"


class CachedResult(models.Model):
    """A conversion result kept 24 hours, keyed by organization, environment, the PDF's SHA-256,
    the normalised options and the engine version (hashed into `key`)."""

    key = models.CharField(max_length=64, primary_key=True)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    payload = models.JSONField()
    pages_converted = models.IntegerField()
    created_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return self.key


class IdempotencyRecord(models.Model):
    """An Idempotency-Key of an organization and environment, and the response stored for it."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    request_id = models.CharField(max_length=40)
    # Until when the first attempt counts as running; a crashed attempt's key becomes usable again.
    lease_until = models.DateTimeField()
    completed = models.BooleanField(default=False)
    status = models.PositiveSmallIntegerField(null=True)
    headers = models.JSONField(default=dict)
    body = models.BinaryField(null=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "environment", "key"], name="idempotency_unique")
        ]

    def __str__(self) -> str:
        return f"{self.organization_id} {self.key}"


class StoredFile(models.Model):
    """An uploaded PDF kept for later conversions, or the picture of a figure a conversion
    cropped (option `figures: "crop"`). The bytes are content-addressed per
    organization and environment (one blob per SHA-256); a deleted or expired record keeps its
    row as a tombstone so that later reads are answered correctly."""

    id = models.CharField(primary_key=True, max_length=40, default=new_file_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    api_key_id = models.CharField(max_length=40)
    filename = models.CharField(max_length=255, blank=True, default="")
    bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    page_count = models.IntegerField(null=True, blank=True)
    storage_name = models.CharField(max_length=300)
    # What the bytes are: an uploaded PDF, or a figure's picture a conversion cropped (image/png).
    content_type = models.CharField(max_length=100, default="application/pdf")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    purged_at = models.DateTimeField(null=True, blank=True)
    # The conversion a figure's picture belongs to while its result is not kept yet (a version 1
    # request id, or "<job id>/<lead attempt>" of a version 2 job); "" once kept, and for an
    # upload. A file left pending when its conversion fails, is canceled or dies is deleted
    # (conversion.files.figure_files_discard, figure_files_sweep).
    pending_for = models.CharField(max_length=80, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["organization", "environment", "sha256"], name="file_org_env_sha"),
            models.Index(fields=["pending_for"], condition=~models.Q(pending_for=""), name="file_pending"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.filename}"


def new_job_id() -> str:
    return new_id("job")


class Job(models.Model):
    """A version 2 conversion of any length (`/v2/jobs`), run in the background.

    The selected pages are cut into parts (`JobPart`) that any worker of the jobs queue parses
    in parallel; one lead task renders them in page order as they come, so that the pages of
    the result are those one conversion of the whole selection gives. Credits for the selected
    pages are held at submission, captured when the job succeeds, released when it fails or is
    canceled (`conversion.async_jobs`).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELED = "canceled"

    ENDED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELED)

    id = models.CharField(primary_key=True, max_length=40, default=new_job_id, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    environment = models.CharField(max_length=4, choices=ENVIRONMENT_CHOICES)
    api_key_id = models.CharField(max_length=40)
    request_id = models.CharField(max_length=40)  # the request that created it
    # The PDF: an alias of settings.STORAGES ("async" for an upload kept with the job, "files"
    # for a stored file) and its key there.
    source_store = models.CharField(max_length=10)
    source_key = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    filename = models.CharField(max_length=255, blank=True, default="")
    # The engine's options (tables, fallback, flavor, ocr, ocr_languages) and the pages selected, in order.
    options = models.JSONField(default=dict)
    pages = models.JSONField(default=list)
    webhook_metadata = models.JSONField(null=True, blank=True)
    # A sealed PDF password (conversion.sealing), dropped when the job ends.
    sealed_password = models.BinaryField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    page_count = models.IntegerField(default=0)  # the document's
    pages_total = models.IntegerField()  # selected
    pages_parsed = models.IntegerField(default=0)
    pages_completed = models.IntegerField(default=0)  # rendered, in page order
    page_chunks = models.IntegerField(default=0)  # files of rendered pages written so far
    parts_total = models.IntegerField()
    credits_held = models.BigIntegerField(default=0)
    credits_billed = models.BigIntegerField(default=0)
    pages_billed = models.IntegerField(default=0)
    # Pages read by OCR (option `ocr`): those the pre-flight found, held for at their price;
    # once the job succeeded, those its result read (and billed).
    ocr_pages = models.IntegerField(default=0)
    error = models.JSONField(null=True, blank=True)
    # The result in the store (the v1 result body), once the job succeeded.
    result_key = models.CharField(max_length=500, blank=True, default="")
    result_bytes = models.BigIntegerField(default=0)
    warnings = models.JSONField(default=list)
    # The lead task: renewed every few seconds while it runs; a stale one is taken over.
    lead_heartbeat_at = models.DateTimeField(null=True, blank=True)
    lead_attempts = models.IntegerField(default=0)
    # The worker (its Celery node name) whose lead has it, and when a lead task was last sent.
    lead_worker = models.CharField(max_length=200, blank=True, default="")
    lead_sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The job, its result and its input are deleted after this (SVCX_JOB_RETENTION).
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "environment", "-created_at"], name="v2job_org_time"),
            models.Index(fields=["status", "lead_heartbeat_at"], name="v2job_status_beat"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.status}"


class JobPart(models.Model):
    """A run of consecutive selected pages of a job, parsed by one task; its layout is kept in
    the store until the job ends, so a worker lost mid-job loses at most its part."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="parts")
    index = models.IntegerField()
    # Positions in the job's `pages` (start inclusive, end exclusive).
    start = models.IntegerField()
    end = models.IntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.IntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # The worker (its Celery node name) that claimed it last, and when its task was last sent.
    worker = models.CharField(max_length=200, blank=True, default="")
    sent_at = models.DateTimeField(null=True, blank=True)
    stored_key = models.CharField(max_length=500, blank=True, default="")
    error = models.JSONField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="v2job_part_unique")]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="v2job_part_status_beat")]

    def __str__(self) -> str:
        return f"{self.job_id} part {self.index} {self.status}"

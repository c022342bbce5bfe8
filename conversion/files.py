"""Stored files: upload, read, delete, retention and the storage quota. A stored file is an
uploaded PDF, or the picture of a figure a conversion cropped (option `figures: "crop"`)."""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import Storage
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.authentication import Caller
from accounts.models import Organization
from billing.limits import STORAGE_BYTES, limit_for
from conversion.models import ConversionJob, Job, StoredFile
from conversion.store import Store, store
from core.errors import ErrorCode, ServiceError, caller_text
from core.ids import is_id

logger = logging.getLogger("svcx.conversion")


def _storage() -> Storage:
    return store(Store.FILES)


PDF = "application/pdf"
PNG = "image/png"
_SUFFIXES = {PDF: "pdf", PNG: "png"}


def _blob_name(org_id: str, environment: str, sha256: str, content_type: str = PDF) -> str:
    return f"{org_id}/{environment}/{sha256[:2]}/{sha256}.{_SUFFIXES[content_type]}"


def _live(organization: Organization, environment: str) -> Q:
    return Q(organization=organization, environment=environment, deleted_at__isnull=True, purged_at__isnull=True)


def storage_used(*, organization: Organization, environment: str) -> int:
    """Bytes held for the organization and environment: one blob per distinct content."""
    rows = StoredFile.objects.filter(_live(organization, environment)).values_list("sha256", "bytes")
    return sum(dict(rows).values())


def file_create(
    *, caller: Caller, source: Path, size: int, sha256: str, filename: str, page_count: int | None
) -> StoredFile:
    """Store the bytes (once per content) and the record.

    Raises 413 `storage_quota_exceeded` (details: quota, used, needed) and leaves nothing
    behind; the organization's row is locked so that parallel uploads cannot overshoot.
    """
    with source.open("rb") as handle:
        return _file_store(
            organization=caller.organization,
            environment=caller.environment,
            api_key_id=caller.key_id,
            content=File(handle),
            size=size,
            sha256=sha256,
            filename=filename,
            page_count=page_count,
            content_type=PDF,
        )


def figure_file_create(
    *, organization: Organization, environment: str, api_key_id: str, png: bytes, filename: str, pending_for: str
) -> StoredFile:
    """Store a figure's picture (PNG bytes) as a file of the organization and environment, with
    the retention and quota of an upload, pending for the conversion `pending_for` until its
    result is kept (figure_files_keep; else figure_files_discard). Raises 413
    `storage_quota_exceeded` like file_create."""
    return _file_store(
        organization=organization,
        environment=environment,
        api_key_id=api_key_id,
        content=ContentFile(png),
        size=len(png),
        sha256=hashlib.sha256(png).hexdigest(),
        filename=filename,
        page_count=None,
        content_type=PNG,
        pending_for=pending_for,
    )


def _file_store(
    *,
    organization: Organization,
    environment: str,
    api_key_id: str,
    content: File[bytes],
    size: int,
    sha256: str,
    filename: str,
    page_count: int | None,
    content_type: str,
    pending_for: str = "",
) -> StoredFile:
    storage = _storage()
    name = _blob_name(organization.pk, environment, sha256, content_type)
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=organization.pk)
        quota = limit_for(organization, STORAGE_BYTES)
        used = storage_used(organization=organization, environment=environment)
        already_stored = StoredFile.objects.filter(_live(organization, environment), sha256=sha256).exists()
        needed = 0 if already_stored else size
        if used + needed > quota:
            raise ServiceError(
                ErrorCode.STORAGE_QUOTA_EXCEEDED,
                f"Storing this file needs {needed} bytes but only {max(quota - used, 0)} of the {quota}-byte quota "
                "are free. "
                "Delete files you no longer need; files also expire after their retention window.",
                details={"quota_bytes": quota, "used_bytes": used, "needed_bytes": needed},
            )
        if not storage.exists(name):
            storage.save(name, content)
        return StoredFile.objects.create(
            organization=organization,
            environment=environment,
            api_key_id=api_key_id,
            filename=caller_text(filename)[:255],
            bytes=size,
            sha256=sha256,
            page_count=page_count,
            storage_name=name,
            content_type=content_type,
            pending_for=pending_for,
            expires_at=timezone.now() + timedelta(seconds=float(settings.SVCX_FILE_RETENTION)),
        )


def file_get(*, caller: Caller, file_id: str) -> StoredFile:
    """The caller's file. Another organization's or environment's id, or a deleted file, is
    404 `file_not_found` (never 403); a file past retention is 410 `file_expired`."""
    return _file_of(organization_id=caller.org_id, environment=caller.environment, file_id=file_id)


def file_content_open(*, caller: Caller, file_id: str) -> tuple[StoredFile, File[bytes]]:
    """The caller's file and its bytes, open for reading (the caller closes them). Raises like
    file_get."""
    record = file_get(caller=caller, file_id=file_id)
    try:
        return record, _storage().open(record.storage_name, "rb")
    except FileNotFoundError:
        # The record says the bytes are kept, the store has lost them: for the client the file
        # is gone, as one past retention is; for us a fault to look into.
        logger.error(
            "stored file's bytes missing from the store",
            extra={"file_id": record.id, "storage_name": record.storage_name},
        )
        raise ServiceError(
            ErrorCode.FILE_EXPIRED,
            f"The bytes of the file {record.id} are no longer kept; upload it again.",
            param="file_id",
        ) from None


def figure_files_live(*, organization_id: str, environment: str, file_ids: set[str]) -> bool:
    """Whether every one of `file_ids` is a file of the organization and environment that can
    still be read (not deleted, not past retention)."""
    live = StoredFile.objects.filter(
        pk__in=file_ids,
        organization_id=organization_id,
        environment=environment,
        deleted_at__isnull=True,
        purged_at__isnull=True,
        expires_at__gt=timezone.now(),
    )
    return live.count() == len(file_ids)


def _file_of(*, organization_id: str, environment: str, file_id: str) -> StoredFile:
    record = (
        StoredFile.objects.filter(pk=file_id, organization_id=organization_id, environment=environment).first()
        if is_id(file_id, "file")
        else None
    )
    if record is None or record.deleted_at is not None:
        raise ServiceError(
            ErrorCode.FILE_NOT_FOUND,
            f"No file {caller_text(file_id)!r} exists for this organization and environment.",
            param="file_id",
        )
    if record.purged_at is not None or record.expires_at <= timezone.now():
        raise ServiceError(
            ErrorCode.FILE_EXPIRED,
            f"The file {record.id} passed its retention window on {record.expires_at:%Y-%m-%d %H:%M} UTC; "
            "upload it again.",
            param="file_id",
            details={"expired_at": record.expires_at.isoformat().replace("+00:00", "Z")},
        )
    return record


def _remove_blob_if_unused(record: StoredFile) -> None:
    still_used = StoredFile.objects.filter(
        organization_id=record.organization_id,
        environment=record.environment,
        sha256=record.sha256,
        deleted_at__isnull=True,
        purged_at__isnull=True,
    ).exclude(pk=record.pk)
    if not still_used.exists():
        _storage().delete(record.storage_name)


def file_delete(*, organization: Organization, environment: str, file_id: str) -> StoredFile:
    """Remove the bytes (unless another live record has the same content) and keep a tombstone.
    Raises like file_get for a file that is not the organization's and environment's."""
    with transaction.atomic():
        Organization.objects.select_for_update().get(pk=organization.pk)
        record = _file_of(organization_id=organization.pk, environment=environment, file_id=file_id)
        _tombstone(record)
    return record


def _tombstone(record: StoredFile) -> None:
    record.deleted_at = timezone.now()
    record.save(update_fields=["deleted_at"])
    _remove_blob_if_unused(record)


def _owned_by(owner: str) -> Q:
    # A version 2 job's own id names the files of all its leads ("<job id>/<attempt>").
    return Q(pending_for=owner) | Q(pending_for__startswith=f"{owner}/")


def figure_files_keep(*, owner: str) -> int:
    """The files of the conversion `owner` are its kept result's: no longer pending. Called in
    the transaction that keeps the result. Returns how many."""
    return StoredFile.objects.filter(pending_for=owner, deleted_at__isnull=True).update(pending_for="")


def figure_files_discard(*, owner: str, keep: str = "") -> int:
    """Delete, as file_delete does (bytes, tombstone, quota), the files still pending for the
    conversion `owner` (a request id, a job id: all its leads', or one lead's "<job id>/<attempt>"),
    but those of the lead `keep`: its result was not kept. Returns how many."""
    pending = StoredFile.objects.filter(_owned_by(owner), deleted_at__isnull=True).exclude(pending_for="")
    if keep:
        pending = pending.exclude(pending_for=keep)
    discarded = 0
    for file_id, organization_id in pending.values_list("pk", "organization_id")[:10000]:
        with transaction.atomic():
            Organization.objects.select_for_update().get(pk=organization_id)
            # Still pending under the lock: a result kept meanwhile keeps its files.
            record = (
                StoredFile.objects.select_for_update()
                .filter(pk=file_id, deleted_at__isnull=True)
                .exclude(pending_for="")
                .first()
            )
            if record is None:
                continue
            _tombstone(record)
        discarded += 1
    return discarded


def figure_files_sweep() -> int:
    """Delete the files left pending by conversions that can no longer keep them (a scheduled
    job): their worker died, or the web side or the sweeper of jobs ended them without the
    worker's knowing. Returns how many."""
    owners = (
        StoredFile.objects.exclude(pending_for="")
        .filter(deleted_at__isnull=True)
        .values_list("pending_for", flat=True)
        .distinct()[:1000]
    )
    return sum(figure_files_discard(owner=owner) for owner in list(owners) if not _conversion_running(owner))


def _conversion_running(owner: str) -> bool:
    """Whether the conversion `owner` may still keep its result: it is queued or running (a
    version 2 job with this lead), within twice its time limit of its start (past it, a worker
    that stopped beating is not coming back)."""
    job_id, _, attempt = owner.partition("/")
    if attempt:
        started = (
            Job.objects.filter(
                pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING], lead_attempts=int(attempt)
            )
            .values_list("created_at", flat=True)
            .first()
        )
        limit = float(settings.SVCX_JOB_TIME_LIMIT)
    else:
        row = (
            ConversionJob.objects.filter(
                pk=owner, status__in=[ConversionJob.Status.QUEUED, ConversionJob.Status.RUNNING]
            )
            .values_list("started_at", "created_at")
            .first()
        )
        started = (row[0] or row[1]) if row else None
        limit = float(settings.SVCX_CONVERSION_TIME_LIMIT)
    return started is not None and timezone.now() - started < timedelta(seconds=2 * limit + 60)


def files_purge_expired() -> int:
    """Delete the bytes of files past retention (a scheduled job). Returns how many."""
    purged = 0
    for record in StoredFile.objects.filter(
        expires_at__lte=timezone.now(), purged_at__isnull=True, deleted_at__isnull=True
    )[:1000]:
        with transaction.atomic():
            Organization.objects.select_for_update().get(pk=record.organization_id)
            record.purged_at = timezone.now()
            record.save(update_fields=["purged_at"])
            _remove_blob_if_unused(record)
        purged += 1
    return purged

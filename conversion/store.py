"""The store web and workers share (Django's storage layer: the file system on the embedded
default, S3-compatible object storage in production). A job's PDF reaches its worker through it,
by key, never as a path on the web host's disk."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages

from core.errors import ErrorCode, ServiceError


class Store(StrEnum):
    """The storage aliases of settings.STORAGES that hold PDFs."""

    FILES = "files"  # stored files, content-addressed per organization and environment
    JOBS = "jobs"  # the upload of one job, deleted when the job ends
    ASYNC = "async"  # version 2 jobs: uploads, parts' layout, pages and results, kept until they expire


def store(alias: Store) -> Storage:
    return storages[alias]


@dataclass(frozen=True)
class Source:
    """The PDF a request names: an upload still on this host's disk (`path`), or an object
    already in the files store (`key`)."""

    sha256: str
    path: Path | None = None
    key: str = ""
    filename: str = ""  # the document's name as the client gave it ("" when it gave none)


def job_input_key(request_id: str) -> str:
    return f"{request_id}.pdf"


def object_put(alias: Store, key: str, path: Path) -> str:
    """Copy a local file into the store under `key`; returns the key it was saved under (the
    file system renames rather than overwrite an existing name)."""
    with path.open("rb") as handle:
        return str(store(alias).save(key, File(handle)))


def object_delete(alias: Store, key: str) -> None:
    """Delete the object; one already gone is no error."""
    store(alias).delete(key)


@contextmanager
def object_fetched(alias: Store, key: str) -> Iterator[Path]:
    """A local path to the object's bytes: the file itself on the file system, else a download
    to this host's spool directory, deleted on exit. Raises FileNotFoundError when the object
    is missing."""
    storage = store(alias)
    try:
        local = storage.path(key)
    except NotImplementedError:
        local = None
    if local is not None:
        if not Path(local).is_file():
            raise FileNotFoundError(key)
        yield Path(local)
        return
    directory = Path(settings.SVCX_SPOOL_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=directory, prefix="fetched-", suffix=".pdf") as out:
        with storage.open(key, "rb") as src:  # a missing key raises FileNotFoundError
            shutil.copyfileobj(src, out, 1024 * 1024)
        out.flush()
        yield Path(out.name)


@contextmanager
def job_input(alias: Store, key: str) -> Iterator[Path]:
    """The job's PDF on this host, for the engine. A stored file deleted before the job ran is
    404 `file_not_found`; a job upload that vanished is 500 `internal_error` (retryable)."""
    with contextlib.ExitStack() as stack:
        try:
            path = stack.enter_context(object_fetched(alias, key))
        except FileNotFoundError as exc:
            if alias == Store.FILES:
                raise ServiceError(
                    ErrorCode.FILE_NOT_FOUND,
                    "The stored file was deleted before the conversion started.",
                    param="file_id",
                ) from exc
            raise ServiceError(ErrorCode.INTERNAL_ERROR, "The uploaded PDF was no longer in the store.") from exc
        yield path


def job_input_discard(alias: str, key: str) -> None:
    """Delete a job's own upload (never a stored file) once the job has ended."""
    if alias == Store.JOBS and key:
        with contextlib.suppress(FileNotFoundError):
            object_delete(Store.JOBS, key)


def objects_older(alias: Store, cutoff: datetime) -> Iterator[str]:
    """The keys of the store's objects last written before `cutoff` (an aware datetime): on S3 one
    listing of the alias's prefix (it carries each object's time), on the file system a walk."""
    storage = store(alias)
    bucket = getattr(storage, "bucket", None)  # django-storages' S3Storage
    if bucket is not None:
        location = str(getattr(storage, "location", "") or "").strip("/")
        prefix = f"{location}/" if location else ""
        for summary in bucket.objects.filter(Prefix=prefix):
            if summary.last_modified < cutoff:
                yield summary.key[len(prefix) :]
        return
    root = Path(storage.path(""))
    if not root.is_dir():
        return
    for path in root.rglob("*"):
        with contextlib.suppress(FileNotFoundError):  # deleted while we looked
            if path.is_file() and datetime.fromtimestamp(path.stat().st_mtime, tz=cutoff.tzinfo) < cutoff:
                yield path.relative_to(root).as_posix()

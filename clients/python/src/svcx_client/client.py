"""The svcx API client: one typed method per /v1 and /v2 operation.

    from svcx_client import Client

    with Client() as svcx:  # SVCX_API_KEY, SVCX_BASE_URL
        result = svcx.convert("report.pdf", format="md", pages="1-3")
        print(result.markdown, result.credits_billed)

A document is sent as the raw PDF body (`/v1/<operation>/raw`, options in the query string), or
named by the `file_id` of a stored file (a JSON body); a job of a named file is sent as
multipart/form-data, so that the job keeps the file's name. Every POST and DELETE carries an
Idempotency-Key, made once per call and sent again on each retry (see `svcx_client.retry`).
The client is safe to share between threads.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal, TypedDict, TypeVar, Unpack, overload
from urllib.parse import quote

import httpx

from svcx_client import models
from svcx_client.errors import (
    APIConnectionError,
    APIError,
    ConfigurationError,
    JobCanceledError,
    JobFailedError,
    JobWaitTimeout,
    SvcxError,
    error_class,
)
from svcx_client.retry import IN_PROGRESS, RetryPolicy, is_retryable, server_wait

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# A conversion waits for its result, and the service stops one at 120 s.
DEFAULT_TIMEOUT = 150.0
MARKDOWN = "text/markdown"
JSON = "application/json"
NDJSON = "application/x-ndjson"
# Before reading a job's pages again after a stream that brought none.
STREAM_PAUSE = 1.0

Source = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]
Format = Literal["json", "md", "markdown"]
Row = TypeVar("Row")


class _ConversionOptions(TypedDict, total=False):
    pages: str
    flavor: Literal["gfm"]
    tables: Literal["markdown", "html", "text"]
    fallback: Literal["empty", "error"]
    # "crop": each figure's picture stored as a file (`image.file_id` on the figure element,
    # read with `file_content`) and linked from the Markdown.
    figures: Literal["none", "crop"]
    password: str
    metadata: dict[str, Any]
    idempotency_key: str


class DocumentOptions(_ConversionOptions, total=False):
    """What a request about a document may carry besides the document (decisions.md 1, 2).
    Version 1 reads no scans: `ocr` is "off"."""

    ocr: Literal["off"]
    debug: bool


class _ScanOptions(_ConversionOptions, total=False):
    """Version 2's options: version 1's, and OCR. `ocr`: "off", "auto" (the pages without a
    usable text layer) or "force" (every page); `ocr_languages`: ISO 639-1 codes (["en"] by
    default) among those `engines()` lists."""

    ocr: Literal["off", "auto", "force"]
    ocr_languages: Sequence[str]


class JobOptions(_ScanOptions, total=False):
    """What POST /v2/jobs may carry besides the document: a conversion's options (OCR's
    among them) and `webhook_metadata`, an object echoed in the job."""

    webhook_metadata: dict[str, Any]


class JobInspectOptions(_ScanOptions, total=False):
    """What POST /v2/inspect may carry besides the document: a job's options and `debug`."""

    debug: bool


_DOCUMENT_MEMBERS = frozenset(DocumentOptions.__annotations__)
_JOB_MEMBERS = frozenset(JobOptions.__annotations__)
_JOB_INSPECT_MEMBERS = frozenset(JobInspectOptions.__annotations__)
_OPTION_NAMES = ("pages", "ocr", "ocr_languages", "flavor", "tables", "fallback", "figures")
# Multipart parts that hold JSON text.
_JSON_PARTS = ("options", "metadata", "webhook_metadata")


def environment_key() -> str:
    """SVCX_API_KEY, else SVCX_KEY (the name the service's guides export)."""
    return os.environ.get("SVCX_API_KEY") or os.environ.get("SVCX_KEY") or ""


def environment_base_url() -> str:
    """SVCX_BASE_URL, else SVCX_URL (the name the service's guides export)."""
    return os.environ.get("SVCX_BASE_URL") or os.environ.get("SVCX_URL") or ""


def new_idempotency_key() -> str:
    return f"svcx-py-{uuid.uuid4()}"


def read_source(source: Source) -> bytes:
    """The PDF's bytes from a path, bytes, or a binary file object."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source)
    if isinstance(source, str | os.PathLike):
        return Path(source).read_bytes()
    return source.read()


class Client:
    """A client of the svcx API.

    `api_key` defaults to the environment's SVCX_API_KEY (or SVCX_KEY), `base_url` to
    SVCX_BASE_URL (or SVCX_URL, else http://127.0.0.1:8000). `timeout` is seconds per attempt (connecting: at most 10).
    Errors are raised as `svcx_client.errors.APIError` subclasses carrying the envelope, or
    `APIConnectionError` when no answer came.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = api_key if api_key is not None else environment_key()
        if not key:
            raise ConfigurationError("No API key: pass api_key or set SVCX_API_KEY.")
        self.base_url = (base_url or environment_base_url() or DEFAULT_BASE_URL).rstrip("/")
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._random = random.Random()  # noqa: S311  # jitter, not a secret
        self._lock = threading.Lock()
        self._rate_limits: dict[str, models.RateLimit] = {}
        self._requests_blocked_until = 0.0
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"User-Agent": f"svcx-client-python/{__version__}", **(headers or {})},
            transport=transport,
        )
        self._auth = {"Authorization": f"Bearer {key}"}

    # -- the lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def rate_limits(self) -> dict[str, models.RateLimit]:
        """The meters the latest answer reported (`requests`, `pages`, ...)."""
        with self._lock:
            return dict(self._rate_limits)

    # -- documents ----------------------------------------------------------------------------

    @overload
    def convert(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        format: Literal["json"] = "json",
        **options: Unpack[DocumentOptions],
    ) -> models.Conversion: ...

    @overload
    def convert(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        format: Literal["md", "markdown"],
        **options: Unpack[DocumentOptions],
    ) -> models.MarkdownConversion: ...

    def convert(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        format: Format = "json",
        **options: Unpack[DocumentOptions],
    ) -> models.Conversion | models.MarkdownConversion:
        """Convert a PDF (a path, bytes or a binary file), or a stored file by `file_id`.

        `format="json"` answers a `Conversion` (every page, its elements, what was billed);
        `format="md"` a `MarkdownConversion` (the Markdown as text, what was billed). One page
        costs one credit; a cached result (the same PDF and options within 24 hours) and every
        error bill nothing. Raises `APIError` subclasses: `PaymentRequiredError` (402),
        `DocumentError` (422, the PDF), `InvalidRequestError` (the request), ...
        """
        if format not in ("json", "md", "markdown"):
            raise ConfigurationError(f"format must be 'json' or 'md', not {format!r}.")
        accept = JSON if format == "json" else MARKDOWN
        response = self._document("/v1/convert", source, file_id, options, accept=accept)
        if accept == MARKDOWN:
            return models.MarkdownConversion.from_text(response.text, response.headers)
        return models.Conversion.from_json(response.json(), models.Answer.of(response.headers))

    def inspect(
        self, source: Source | None = None, *, file_id: str | None = None, **options: Unpack[DocumentOptions]
    ) -> models.Inspection:
        """What a document is (pages, encryption, permissions, a text sample), free of charge;
        `pages` chooses the sampled pages."""
        response = self._document("/v1/inspect", source, file_id, options)
        return models.Inspection.from_json(response.json(), models.Answer.of(response.headers))

    def inspect_job(
        self, source: Source | None = None, *, file_id: str | None = None, **options: Unpack[JobInspectOptions]
    ) -> models.JobInspection:
        """What `inspect` says, and what a job (`create_job`) with the same document and options
        would cost, free of charge: `estimate` has per selected page whether OCR reads it
        (`ocr="auto"`: the pages without a usable text layer), the OCR page count and the
        credits the job would hold."""
        response = self._document("/v2/inspect", source, file_id, options, allowed=_JOB_INSPECT_MEMBERS)
        return models.JobInspection.from_json(response.json(), models.Answer.of(response.headers))

    def toc(
        self, source: Source | None = None, *, file_id: str | None = None, **options: Unpack[DocumentOptions]
    ) -> models.Toc:
        """The document's outline (bookmarks), free of charge."""
        response = self._document("/v1/toc", source, file_id, options)
        return models.Toc.from_json(response.json(), models.Answer.of(response.headers))

    # -- stored files -------------------------------------------------------------------------

    def upload(
        self, source: Source, *, filename: str | None = None, idempotency_key: str | None = None
    ) -> models.StoredFile:
        """Store a PDF (up to 128 MiB, kept 7 days) to convert it by `file_id` afterwards."""
        if filename is None and isinstance(source, str | os.PathLike):
            filename = Path(source).name
        response = self._request(
            "POST",
            "/v1/files/raw",
            params={"filename": filename} if filename else None,
            content=read_source(source),
            headers={"Content-Type": "application/pdf"},
            idempotency_key=idempotency_key,
        )
        return models.StoredFile.from_json(response.json(), models.Answer.of(response.headers))

    def get_file(self, file_id: str) -> models.StoredFile:
        response = self._request("GET", f"/v1/files/{file_id}")
        return models.StoredFile.from_json(response.json(), models.Answer.of(response.headers))

    def file_content(self, file_id: str) -> bytes:
        """The stored file's bytes: an uploaded PDF, or the PNG picture of a figure that a
        conversion with `figures: "crop"` cropped (its `image.file_id`). Raises NotFoundError
        (`file_not_found`) for a file of another organization or a deleted one."""
        return self._request("GET", f"/v1/files/{file_id}/content", accept="*/*").content

    def delete_file(self, file_id: str, *, idempotency_key: str | None = None) -> models.FileDeleted:
        response = self._request("DELETE", f"/v1/files/{file_id}", idempotency_key=idempotency_key)
        return models.FileDeleted.from_json(response.json(), models.Answer.of(response.headers))

    # -- engines, account, ledger, usage -------------------------------------------------------

    def engines(self) -> models.ListPage[models.Engine]:
        response = self._request("GET", "/v1/engines")
        body = response.json()
        return models.ListPage(
            [models.Engine.from_json(e) for e in body["data"]], body["has_more"], models.Answer.of(response.headers)
        )

    def engine(self, engine_id: str) -> models.Engine:
        """One engine; an unknown id raises NotFoundError (`engine_not_found`)."""
        return models.Engine.from_json(self._request("GET", f"/v1/engines/{engine_id}").json())

    def account(self) -> models.Account:
        response = self._request("GET", "/v1/account")
        return models.Account.from_json(response.json(), models.Answer.of(response.headers))

    def ledger(self, *, limit: int = 20, starting_after: str | None = None) -> models.ListPage[models.LedgerEntry]:
        """One page of the credit ledger, newest first (the authoritative record of credits)."""
        return self._list(
            "/v1/credits/ledger", models.LedgerEntry.from_json, limit=limit, starting_after=starting_after
        )

    def usage_records(
        self,
        *,
        limit: int = 20,
        starting_after: str | None = None,
        start: str | None = None,
        end: str | None = None,
        api_key_id: str | None = None,
    ) -> models.ListPage[models.UsageRecord]:
        """One page of usage records (one per request), newest first; `start` and `end` are
        ISO 8601. The reporting copy can lag the ledger by a few seconds."""
        return self._list(
            "/v1/usage/records",
            models.UsageRecord.from_json,
            limit=limit,
            starting_after=starting_after,
            start=start,
            end=end,
            api_key_id=api_key_id,
        )

    def usage(self, *, start: str | None = None, end: str | None = None) -> models.Usage:
        response = self._request("GET", "/v1/usage", params=_present(start=start, end=end))
        return models.Usage.from_json(response.json(), models.Answer.of(response.headers))

    def iter_ledger(self, *, page_size: int = 100) -> Iterator[models.LedgerEntry]:
        """Every ledger entry, newest first, page after page."""
        return _every(lambda after: self.ledger(limit=page_size, starting_after=after))

    def iter_usage_records(self, *, page_size: int = 100, **period: str) -> Iterator[models.UsageRecord]:
        """Every usage record (filtered by `start`, `end`, `api_key_id`), newest first."""
        return _every(lambda after: self.usage_records(limit=page_size, starting_after=after, **period))

    # -- version 2 jobs -----------------------------------------------------------------------

    def create_job(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        filename: str | None = None,
        **options: Unpack[JobOptions],
    ) -> models.Job:
        """Start a job converting a PDF (a path, bytes or a binary file) or a stored file by
        `file_id`, up to 5,000 pages, in the background; answers the job at once (`queued`).

        The options are convert's, with OCR (`ocr`, `ocr_languages`: a page read by OCR costs
        more; `inspect_job` tells how much), plus `webhook_metadata` (an object echoed in the
        job). The credits of the selected pages are held now (402 `PaymentRequiredError` without them, and
        no job is made), billed once the job succeeds, released if it fails or is canceled. The
        document is checked as convert checks it first (`DocumentError`, `InvalidRequestError`;
        400 `too_many_pages` past the limit). A path's name (or `filename`) is kept as the job's
        `filename`. Retried with one Idempotency-Key per call: one job however many attempts.
        """
        if filename is None and isinstance(source, str | os.PathLike):
            filename = Path(source).name
        response = self._document("/v2/jobs", source, file_id, options, allowed=_JOB_MEMBERS, filename=filename)
        return models.Job.from_json(response.json(), models.Answer.of(response.headers))

    def get_job(self, job_id: str) -> models.Job:
        """One job, with its `status` and `pages_completed`; NotFoundError `job_not_found` for
        an unknown id (or one deleted 24 hours after it ended)."""
        response = self._request("GET", _job_path(job_id))
        return models.Job.from_json(response.json(), models.Answer.of(response.headers))

    def jobs(self, *, limit: int = 20, starting_after: str | None = None, status: str | None = None) -> models.JobList:
        """One page of the jobs of the key's organization and environment, newest first;
        `status` keeps the jobs in that status (`queued`, `running`, `succeeded`, ...)."""
        query = _present(limit=limit, starting_after=starting_after, status=status)
        response = self._request("GET", "/v2/jobs", params=query)
        return models.JobList.from_json(response.json(), models.Answer.of(response.headers))

    def iter_jobs(self, *, page_size: int = 100, status: str | None = None) -> Iterator[models.Job]:
        """Every job (in `status`, when given), newest first, page after page."""
        return _every(lambda after: self.jobs(limit=page_size, starting_after=after, status=status))

    def job_result(self, job_id: str) -> models.JobResult:
        """The job's result as `Conversion` answers it, with `job_id` and `status`: every page
        once it has succeeded, the pages converted so far while it runs. Raises
        JobFailedError (`job_error` says why) or JobCanceledError for a job that ended so."""
        with _about_job(job_id):
            response = self._request("GET", _job_path(job_id, "/result"))
        return models.JobResult.from_json(response.json(), models.Answer.of(response.headers))

    def job_markdown(self, job_id: str) -> models.JobMarkdown:
        """The job's result as Markdown (`<!-- page N -->` before each page), what was billed,
        and the job's `status`: the pages converted so far while it runs. Raises as
        `job_result` does."""
        with _about_job(job_id):
            response = self._request("GET", _job_path(job_id, "/result"), accept=MARKDOWN)
        return models.JobMarkdown.from_text(
            response.text, response.headers, job_id=job_id, status=response.headers.get("x-svcx-job-status")
        )

    def iter_job_pages(self, job_id: str, *, after: int = 0) -> Iterator[models.ConversionPage]:
        """The job's pages in order, each as soon as it is converted, until the job ends: the
        stream of pages (NDJSON), read again from where it stopped each time the service ends
        it (it does after a minute) or the connection breaks. `after` skips the pages already
        read. Raises JobFailedError when the job fails (after the pages it converted before)
        or JobCanceledError; APIConnectionError when the stream breaks again and again with
        no page coming."""
        read, broken = after, 0
        while True:
            with _about_job(job_id):
                response = self._request(
                    "GET", _job_path(job_id, "/result"), params={"after": read}, accept=NDJSON, stream=True
                )
            status = response.headers.get("x-svcx-job-status")
            came = 0
            try:
                for line in response.iter_lines():
                    if line.strip():
                        page = models.ConversionPage.from_json(json.loads(line))
                        read, came = read + 1, came + 1
                        yield page
            except httpx.TransportError as exc:
                broken = 0 if came else broken + 1
                if broken > self.retry.max_retries:
                    raise APIConnectionError(
                        f"The pages of {job_id} stopped coming {broken} times in a row: {exc!r}", attempts=broken
                    ) from exc
                self._sleep(self.retry.backoff_delay(max(broken - 1, 0), self._random))
                continue
            finally:
                response.close()
            broken = 0
            if status == "succeeded":  # the stream of an ended job holds every page left
                return
            # It ran out of time, or the job ended while it ran: ask again; a job that failed or
            # was canceled answers its error.
            if not came:
                self._sleep(STREAM_PAUSE)

    def cancel_job(self, job_id: str, *, idempotency_key: str | None = None) -> models.Job:
        """Cancel a queued or running job: it bills nothing and keeps no result; answers the
        canceled job (again for a job canceled before). A job that succeeded or failed raises
        InvalidRequestError `job_not_cancelable` (`details["status"]` says how it ended)."""
        response = self._request("POST", _job_path(job_id, "/cancel"), idempotency_key=idempotency_key)
        return models.Job.from_json(response.json(), models.Answer.of(response.headers))

    def wait_job(
        self,
        job_id: str,
        *,
        poll_interval: float = 1.0,
        timeout: float | None = None,
        on_progress: Callable[[models.Job], None] | None = None,
    ) -> models.Job:
        """Read the job every `poll_interval` seconds until it ends, calling `on_progress(job)`
        after each read (`pages_completed` of `pages_total`); answers the job that succeeded.

        Raises JobFailedError (`job_error` says why) or JobCanceledError, with the ended job in
        `job`; JobWaitTimeout when it has not ended within `timeout` seconds (the job goes on).
        """
        started = time.monotonic()
        while True:
            job = self.get_job(job_id)
            if on_progress is not None:
                on_progress(job)
            if job.status == "succeeded":
                return job
            if job.ended:
                self._raise_ended(job)
            if timeout is not None and time.monotonic() - started + poll_interval > timeout:
                raise JobWaitTimeout(
                    f"The job {job_id} is still {job.status} ({job.pages_completed} of {job.pages_total} pages) "
                    f"after {timeout:g} s.",
                    job=job,
                )
            self._sleep(poll_interval)

    def _raise_ended(self, job: models.Job) -> None:
        """Raise the error the result of a failed or canceled job answers, with the job."""
        try:
            self.job_result(job.id)
        except (JobFailedError, JobCanceledError) as error:
            error.job = job
            raise
        raise SvcxError(f"The job {job.id} has {job.status}, yet its result was answered.")

    # -- unauthenticated ----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """GET /v1/health: whether the service is ready (503 `service_unavailable` is raised)."""
        result: dict[str, Any] = self._request("GET", "/v1/health", authenticated=False).json()
        return result

    def openapi(self) -> dict[str, Any]:
        result: dict[str, Any] = self._request("GET", "/v1/openapi.json", authenticated=False).json()
        return result

    # -- the machinery ------------------------------------------------------------------------

    def _document(
        self,
        path: str,
        source: Source | None,
        file_id: str | None,
        given: Mapping[str, Any],
        *,
        accept: str = JSON,
        allowed: frozenset[str] = _DOCUMENT_MEMBERS,
        filename: str | None = None,
    ) -> httpx.Response:
        """POST a document request: a JSON body naming `file_id` to `path`; a source with a
        `filename` as multipart/form-data to `path`; else the raw PDF to `path`/raw.
        `allowed`: the options the operation takes."""
        unknown = set(given) - allowed
        if unknown:
            raise ConfigurationError(f"Unknown option(s) {', '.join(sorted(unknown))}.")
        if (source is None) == (file_id is None):
            raise ConfigurationError("Give exactly one of a source (path, bytes, file) or file_id.")
        options = {name: given[name] for name in _OPTION_NAMES if given.get(name) is not None}
        if "ocr_languages" in options:
            options["ocr_languages"] = list(options["ocr_languages"])
        password, metadata, debug = given.get("password"), given.get("metadata"), given.get("debug")
        webhook_metadata = given.get("webhook_metadata")
        key = given.get("idempotency_key")
        members = _present(
            options=options or None,
            password=password,
            metadata=metadata,
            webhook_metadata=webhook_metadata,
            debug=debug,
        )
        if file_id is not None:
            body = {"file_id": file_id, **members}
            return self._request("POST", path, json_body=body, accept=accept, idempotency_key=key)
        assert source is not None
        if filename:
            parts = {
                name: json.dumps(value) if name in _JSON_PARTS else _text(value) for name, value in members.items()
            }
            return self._request(
                "POST",
                path,
                data=parts,
                files={"file": (filename, read_source(source), "application/pdf")},
                accept=accept,
                idempotency_key=key,
            )
        headers: dict[str, str | bytes] = {"Content-Type": "application/pdf"}
        # The query string takes `ocr_languages` comma-separated.
        params: dict[str, str] = {
            name: ",".join(value) if isinstance(value, list) else value for name, value in options.items()
        }
        if debug is not None:
            params["debug"] = _text(debug)
        if metadata is not None:
            headers["X-Svcx-Metadata"] = json.dumps(metadata, separators=(",", ":"))
        if webhook_metadata is not None:
            headers["X-Svcx-Webhook-Metadata"] = json.dumps(webhook_metadata, separators=(",", ":"))
        if password is not None:
            # httpx sends header text as ASCII; the service reads the header's bytes as UTF-8.
            headers["X-Svcx-Pdf-Password"] = password.encode("utf-8")
        return self._request(
            "POST",
            f"{path}/raw",
            params=params,
            content=read_source(source),
            headers=headers,
            accept=accept,
            idempotency_key=key,
        )

    def _list(
        self, path: str, row: Callable[[Mapping[str, Any]], Row], **query: str | int | None
    ) -> models.ListPage[Row]:
        response = self._request("GET", path, params=_present(**query))
        body = response.json()
        return models.ListPage([row(r) for r in body["data"]], body["has_more"], models.Answer.of(response.headers))

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        json_body: Any = None,
        data: Mapping[str, str] | None = None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        headers: Mapping[str, str | bytes] | None = None,
        accept: str = JSON,
        idempotency_key: str | None = None,
        authenticated: bool = True,
        stream: bool = False,
    ) -> httpx.Response:
        """Send until a success, an error that is not retryable, or the retries are spent.

        A POST or DELETE gets an Idempotency-Key (`idempotency_key`, else a new one), the same on
        every attempt, so the service answers a retry of a request that did run with its stored
        answer. `data` and `files`: a multipart/form-data body. `stream`: the success is answered
        before its body is read (the caller closes it). Raises APIError (an error answer) or
        APIConnectionError (no answer).
        """
        sent: dict[str, str | bytes] = {"Accept": accept, **(headers or {}), **(self._auth if authenticated else {})}
        if method in ("POST", "DELETE"):
            sent["Idempotency-Key"] = idempotency_key or new_idempotency_key()
        if json_body is not None:
            content = json.dumps(json_body).encode()
            sent["Content-Type"] = JSON
        # Bytes throughout: a header's value may be UTF-8 (the password), which httpx sends as is.
        wire = {name.encode(): value if isinstance(value, bytes) else value.encode() for name, value in sent.items()}
        policy = self.retry
        started = time.monotonic()
        attempts = retries = 0
        while True:
            self._pace()
            attempts += 1
            try:
                request = self._http.build_request(
                    method, path, params=params, content=content, data=data, files=files, headers=wire
                )
                response = self._http.send(request, stream=stream)
                if stream and not response.is_success:
                    with contextlib.closing(response):
                        response.read()
            except httpx.TransportError as exc:
                if retries >= policy.max_retries:
                    raise APIConnectionError(
                        f"No answer from {self.base_url} after {attempts} attempt(s): {exc!r}", attempts=attempts
                    ) from exc
                self._sleep(policy.backoff_delay(retries, self._random))
                retries += 1
                continue
            self._remember(response.headers)
            if response.is_success:
                return response
            envelope = _json_or_none(response)
            if is_retryable(response.status_code, envelope):
                wait = server_wait(response.headers, envelope)
                code = ((envelope or {}).get("error") or {}).get("code")
                if code == IN_PROGRESS:
                    wait = wait or 1.0
                    if time.monotonic() - started + wait <= policy.in_progress_wait:
                        self._sleep(wait)
                        continue
                elif retries < policy.max_retries and (wait is None or wait <= policy.max_wait):
                    if wait is None:
                        wait = policy.backoff_delay(retries, self._random)
                    else:  # spread the clients that were refused together
                        wait += self._random.uniform(0, min(1.0, wait / 10))
                    self._sleep(wait)
                    retries += 1
                    continue
            raise _error(response, envelope, attempts)

    def _remember(self, headers: Mapping[str, str]) -> None:
        """Keep the answer's rate-limit headers; a `requests` meter at 0 holds the next requests
        until its window resets instead of spending them on 429s."""
        limits = models.rate_limits_of(headers)
        if not limits:
            return
        with self._lock:
            self._rate_limits = limits
            meter = limits.get("requests")
            if meter is not None and meter.remaining <= 0:
                self._requests_blocked_until = time.monotonic() + min(meter.reset_seconds, self.retry.max_wait)

    def _pace(self) -> None:
        with self._lock:
            wait = self._requests_blocked_until - time.monotonic()
        if wait > 0:
            self._sleep(wait)


def _present(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def _text(value: Any) -> str:
    """A member as query or multipart text: a flag as `true` or `false`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _job_path(job_id: str, rest: str = "") -> str:
    return f"/v2/jobs/{quote(job_id, safe='')}{rest}"


@contextlib.contextmanager
def _about_job(job_id: str) -> Iterator[None]:
    """Name the job in the error of a job that failed or was canceled."""
    try:
        yield
    except (JobFailedError, JobCanceledError) as error:
        error.job_id = job_id
        raise


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _error(response: httpx.Response, envelope: Any, attempts: int) -> APIError:
    body = envelope if isinstance(envelope, Mapping) else None
    text = "" if body is not None else " ".join(response.text.split())[:200]
    return error_class(response.status_code, body)(
        status=response.status_code,
        envelope=body,
        headers=dict(response.headers),
        attempts=attempts,
        fallback_message=text or response.reason_phrase,
    )


def _every(page_of: Callable[[str | None], models.ListPage[Row]]) -> Iterator[Row]:
    after: str | None = None
    while True:
        page = page_of(after)
        yield from page.data
        if not page.has_more or not page.data:
            return
        after = getattr(page.data[-1], "id", None)
